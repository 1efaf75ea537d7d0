/* The sim driver: in-process devices of any class, with the emulators'
 * fault injection, for unit tests. A sim device is either the caller's
 * struct sim_device (tests inspect and arm it directly) or, for configs that
 * name `driver: {type: sim}`, a small text file in the state directory so
 * that its state outlives one `ofc` command. */
#include "drivers/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sim_priv {
	struct sim_device *dev;
	struct sim_device owned; /* when persisted to a file */
	char *path;		 /* NULL for the caller's device */
};

void sim_device_init(struct sim_device *s, enum dev_class cls, uint32_t ports)
{
	memset(s, 0, sizeof(*s));
	state_init(&s->state, cls);
	s->ports = ports;
	s->mode = FAULT_DENY;
	s->fail_count = 1;
}

void sim_device_free(struct sim_device *s)
{
	state_free(&s->state);
}

static int load(struct sim_priv *p, struct ofc_error *err)
{
	char *text, *line, *next;
	size_t len;
	unsigned lineno = 0;

	if (access(p->path, F_OK) != 0 && errno == ENOENT)
		return 0;
	if (read_file(p->path, 64u << 20, &text, &len, err) < 0) {
		err->code = OFC_E_RUNTIME;
		err->reason = OFC_R_GARBAGE;
		return -1;
	}
	for (line = text; line; line = next) {
		uint32_t v[4];
		char *tok[6], *save = NULL;
		unsigned n = 0;
		bool ok = true;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		lineno++;
		for (char *t = strtok_r(line, " \t\r", &save); t && n < 6;
		     t = strtok_r(NULL, " \t\r", &save))
			tok[n++] = t;
		if (n == 0)
			continue;
		/* Whole numbers only: sscanf's %u wrapped "4294967298" to 2. */
		for (unsigned k = 1; k < n && k <= 4; k++)
			ok &= parse_u32(tok[k], &v[k - 1]) == 0;
		if (ok && n == 3 && strcmp(tok[0], "x") == 0)
			state_add_xconn(&p->dev->state, v[0], v[1]);
		else if (ok && n == 5 && strcmp(tok[0], "c") == 0)
			state_add_chan(&p->dev->state, (struct mrr_chan){v[0], v[1], v[2], v[3]});
		else if (ok && n == 5 && strcmp(tok[0], "l") == 0)
			state_add_link(&p->dev->state, (struct hlink){v[0], v[1], v[2], v[3]});
		else if (ok && n == 4 && strcmp(tok[0], "r") == 0)
			state_add_route(&p->dev->state, (struct hroute){v[0], v[1], v[2]});
		else {
			free(text);
			ofc_error_at(err, OFC_E_RUNTIME, p->path, lineno, 1,
				     "corrupt sim device state");
			err->reason = OFC_R_GARBAGE;
			return -1;
		}
	}
	free(text);
	state_sort(&p->dev->state);
	return 0;
}

static int save(struct sim_priv *p, struct ofc_error *err)
{
	const struct device_state *s = &p->dev->state;
	struct atomic_file af;

	if (!p->path)
		return 0;
	if (atomic_open(&af, p->path, err) < 0)
		return -1;
	for (uint32_t i = 0; i < s->nxc; i++)
		fprintf(af.f, "x %u %u\n", s->xc[i].in, s->xc[i].out);
	for (uint32_t i = 0; i < s->nch; i++)
		fprintf(af.f, "c %u %u %u %u\n", s->ch[i].node, s->ch[i].iface, s->ch[i].wl,
			s->ch[i].role);
	for (uint32_t i = 0; i < s->nlinks; i++)
		fprintf(af.f, "l %u %u %u %u\n", s->links[i].src_host, s->links[i].src_port,
			s->links[i].dst_host, s->links[i].dst_port);
	for (uint32_t i = 0; i < s->nroutes; i++)
		fprintf(af.f, "r %u %u %u\n", s->routes[i].host, s->routes[i].dst_host,
			s->routes[i].port);
	return atomic_commit(&af, err);
}

void sim_device_fault(struct sim_device *s, enum fault_mode mode, uint64_t at, uint64_t count)
{
	__atomic_store_n(&s->mode, mode, __ATOMIC_RELAXED);
	__atomic_store_n(&s->fail_count, count, __ATOMIC_RELAXED);
	__atomic_store_n(&s->fail_at, at, __ATOMIC_RELEASE);
}

/* Count a command; returns the fault to inject for it, or 0. A fault
 * armed while the device runs (sim_device_fault) is read through fail_at
 * first: its mode and count were stored before it. */
static enum fault_mode next_command(struct sim_device *s)
{
	s->commands++;
	if (s->before_command)
		s->before_command(s->hook_ctx, s->commands);
	uint64_t at = __atomic_load_n(&s->fail_at, __ATOMIC_ACQUIRE);
	uint64_t count = __atomic_load_n(&s->fail_count, __ATOMIC_RELAXED);
	enum fault_mode mode = __atomic_load_n(&s->mode, __ATOMIC_RELAXED);

	if (at && s->commands >= at && s->commands < at + count) {
		if (mode == FAULT_LIE) {
			s->lie_armed = true;
			return 0;
		}
		return mode;
	}
	return 0;
}

static int fault_error(enum fault_mode m, struct ofc_error *err)
{
	switch (m) {
	case FAULT_DENY:
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED,
				      "device refused the command (injected)");
	case FAULT_CLOSE:
	case FAULT_CLOSE_AFTER:
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "connection lost (injected)");
	case FAULT_STALL:
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_TIMEOUT, "timed out (injected)");
	default:
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
				      "garbage reply (injected)");
	}
}

static int sim_open(struct device *dev, struct ofc_error *err)
{
	struct sim_priv *p;

	if (device_fence(dev, NULL, err) < 0) /* fenced: send nothing */
		return -1;
	p = xcalloc(1, sizeof(*p));
	if (dev->cfg.sim) {
		p->dev = dev->cfg.sim;
	} else {
		if (!dev->cfg.state_dir) {
			free(p);
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST,
					      "sim device without a state directory");
		}
		p->dev = &p->owned;
		sim_device_init(p->dev, dev->cfg.cls, dev->cfg.ports);
		p->path = xasprintf("%s/sim-%s.txt", dev->cfg.state_dir, dev->cfg.name);
		if (load(p, err) < 0) {
			sim_device_free(p->dev);
			free(p->path);
			free(p);
			return -1;
		}
	}
	dev->priv = p;
	enum fault_mode f = next_command(p->dev);
	if (f) {
		dev->priv = NULL;
		if (p->path)
			sim_device_free(p->dev);
		free(p->path);
		free(p);
		return fault_error(f, err);
	}
	return 0;
}

static int sim_read(struct device *dev, struct device_state *out, struct ofc_error *err)
{
	struct sim_priv *p = dev->priv;
	enum fault_mode f;

	if (device_fence(dev, NULL, err) < 0) /* fenced: send nothing */
		return -1;
	f = next_command(p->dev);

	dev->stats.commands++;
	if (f)
		return fault_error(f, err);
	state_copy(out, &p->dev->state);
	if (p->dev->lie_armed) {
		p->dev->lie_armed = false;
		if (out->nxc)
			out->xc[0].out =
			    out->xc[0].out % (p->dev->ports ? p->dev->ports : 1u << 20) + 1;
		else
			state_add_xconn(out, 1, 1);
	}
	return 0;
}

static int find_xc(const struct device_state *s, uint32_t in, uint32_t out)
{
	for (uint32_t i = 0; i < s->nxc; i++)
		if ((in && s->xc[i].in == in) || (out && s->xc[i].out == out))
			return (int)i;
	return -1;
}

/* Carry out one op on the state; -1 (err set) when the device refuses. */
static int act(struct sim_device *d, const struct op *op, struct ofc_error *err)
{
	struct device_state *s = &d->state;
	int k;

	switch (op->kind) {
	case OP_CONNECT:
		if (d->ports && (op->xc.in < 1 || op->xc.in > d->ports || op->xc.out < 1 ||
				 op->xc.out > d->ports))
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED, "no such port");
		k = find_xc(s, op->xc.in, 0);
		if (k >= 0 && s->xc[k].out == op->xc.out)
			return 0;
		if (k >= 0 || find_xc(s, 0, op->xc.out) >= 0)
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED, "port in use");
		state_add_xconn(s, op->xc.in, op->xc.out);
		break;
	case OP_DISCONNECT:
		k = find_xc(s, op->xc.in, 0);
		if (k < 0)
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED,
					      "port %u is not connected", op->xc.in);
		s->xc[k] = s->xc[--s->nxc];
		break;
	case OP_TUNE_ON:
	case OP_TUNE_OFF: {
		bool on = op->kind == OP_TUNE_ON;
		uint32_t i;

		for (i = 0; i < s->nch; i++)
			if (memcmp(&s->ch[i], &op->ch, sizeof(op->ch)) == 0)
				break;
		if (on == (i < s->nch))
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED,
					      "channel already %s", on ? "tuned" : "off");
		if (on)
			state_add_chan(s, op->ch);
		else
			s->ch[i] = s->ch[--s->nch];
		break;
	}
	case OP_LINK_ADD:
	case OP_LINK_DEL: {
		uint32_t i;

		for (i = 0; i < s->nlinks; i++)
			if (memcmp(&s->links[i], &op->link, sizeof(op->link)) == 0)
				break;
		if (op->kind == OP_LINK_ADD) {
			if (i == s->nlinks)
				state_add_link(s, op->link);
		} else if (i < s->nlinks) {
			s->links[i] = s->links[--s->nlinks];
			/* Routes die with their link, as in the kernel. */
			for (uint32_t q = 0; q < s->nroutes;)
				if (s->routes[q].host == op->link.src_host &&
				    s->routes[q].port == op->link.src_port)
					s->routes[q] = s->routes[--s->nroutes];
				else
					q++;
		}
		break;
	}
	case OP_ROUTE_SET:
	case OP_ROUTE_DEL: {
		uint32_t i;

		for (i = 0; i < s->nroutes; i++)
			if (s->routes[i].host == op->route.host &&
			    s->routes[i].dst_host == op->route.dst_host)
				break;
		if (op->kind == OP_ROUTE_SET) {
			if (i < s->nroutes)
				s->routes[i] = op->route;
			else
				state_add_route(s, op->route);
		} else if (i < s->nroutes) {
			s->routes[i] = s->routes[--s->nroutes];
		}
		break;
	}
	}
	state_sort(s);
	return 0;
}

static int sim_apply(struct device *dev, const struct op_batch *b, uint32_t *done,
		     struct ofc_error *err)
{
	struct sim_priv *p = dev->priv;

	for (uint32_t i = 0; i < b->n; i++) {
		enum fault_mode f;

		if (device_fence(dev, NULL, err) < 0) /* fenced: send nothing */
			return -1;
		f = next_command(p->dev);

		dev->stats.commands++;
		if (f == FAULT_CLOSE_AFTER)
			act(p->dev, &b->ops[i], &(struct ofc_error){0});
		if (f) {
			save(p, &(struct ofc_error){0});
			return fault_error(f, err);
		}
		if (act(p->dev, &b->ops[i], err) < 0) {
			char what[96];

			op_describe(&b->ops[i], what, sizeof(what));
			ofc_error_prefix(err, "device refused %s", what);
			save(p, &(struct ofc_error){0});
			return -1;
		}
		(*done)++;
	}
	return save(p, err);
}

/* The device's lock, as a NETCONF device keeps one, when the sim device
 * has one (lockable): a command like any other (faults apply), refused
 * while another manager holds it. */
static int sim_lock(struct device *dev, struct ofc_error *err)
{
	struct sim_priv *p = dev->priv;
	enum fault_mode f;

	if (!p->dev->lockable)
		return 1; /* no lock on this device: nothing sent */
	if (p->dev->locked)
		return 2; /* this session holds it already */
	if (device_fence(dev, NULL, err) < 0) /* fenced: send nothing */
		return -1;
	f = next_command(p->dev);

	dev->stats.commands++;
	if (f)
		return fault_error(f, err);
	if (p->dev->lock_held_elsewhere)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED,
				      "the lock is held by another session");
	p->dev->locked = true;
	return 0;
}

static int sim_unlock(struct device *dev, struct ofc_error *err)
{
	struct sim_priv *p = dev->priv;
	enum fault_mode f;

	if (!p->dev->lockable)
		return 0;
	if (device_fence(dev, NULL, err) < 0) /* fenced: send nothing */
		return -1;
	f = next_command(p->dev);

	dev->stats.commands++;
	if (f)
		return fault_error(f, err);
	if (!p->dev->locked)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED,
				      "unlock of a lock this session does not hold");
	p->dev->locked = false;
	return 0;
}

static void sim_close(struct device *dev)
{
	struct sim_priv *p = dev->priv;

	if (!p)
		return;
	p->dev->locked = false; /* the session ends: the device drops its lock */
	if (p->path)
		sim_device_free(p->dev);
	free(p->path);
	free(p);
	dev->priv = NULL;
}

const struct driver_ops sim_driver_ops = {
    .name = "sim",
    .cls = 0,
    .open = sim_open,
    .read_state = sim_read,
    .apply = sim_apply,
    .close = sim_close,
    .lock = sim_lock,
    .unlock = sim_unlock,
};
