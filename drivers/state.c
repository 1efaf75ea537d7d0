/* Device state: sorted flat arrays, comparison, and the diff that turns
 * one state into another as an ordered batch of operations. */
#include "drivers/drivers.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void state_init(struct device_state *s, enum dev_class cls)
{
	memset(s, 0, sizeof(*s));
	s->cls = cls;
}

void state_free(struct device_state *s)
{
	free(s->xc);
	free(s->ch);
	free(s->links);
	free(s->routes);
	state_init(s, s->cls);
}

void state_clear(struct device_state *s)
{
	s->nxc = s->nch = s->nlinks = s->nroutes = 0;
}

#define COPY_ARR(dst, src, arr, n, cap)                                                            \
	do {                                                                                       \
		(dst)->n = 0;                                                                      \
		GROW((dst)->arr, (dst)->cap, (size_t)(src)->n + 1);                                \
		if ((src)->n)                                                                      \
			memcpy((dst)->arr, (src)->arr, (src)->n * sizeof(*(src)->arr));            \
		(dst)->n = (src)->n;                                                               \
	} while (0)

void state_copy(struct device_state *dst, const struct device_state *src)
{
	dst->cls = src->cls;
	COPY_ARR(dst, src, xc, nxc, xc_cap);
	COPY_ARR(dst, src, ch, nch, ch_cap);
	COPY_ARR(dst, src, links, nlinks, links_cap);
	COPY_ARR(dst, src, routes, nroutes, routes_cap);
}

void state_add_xconn(struct device_state *s, uint32_t in, uint32_t out)
{
	GROW(s->xc, s->xc_cap, (size_t)s->nxc + 1);
	s->xc[s->nxc++] = (struct xconn){in, out};
}

void state_add_chan(struct device_state *s, struct mrr_chan c)
{
	GROW(s->ch, s->ch_cap, (size_t)s->nch + 1);
	s->ch[s->nch++] = c;
}

void state_add_link(struct device_state *s, struct hlink l)
{
	GROW(s->links, s->links_cap, (size_t)s->nlinks + 1);
	s->links[s->nlinks++] = l;
}

void state_add_route(struct device_state *s, struct hroute r)
{
	GROW(s->routes, s->routes_cap, (size_t)s->nroutes + 1);
	s->routes[s->nroutes++] = r;
}

/* Every record is a run of uint32_t: compare them as such. */
static int cmp_u32s(const uint32_t *a, const uint32_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

static int cmp_xc(const void *a, const void *b)
{
	return cmp_u32s(a, b, 2);
}
static int cmp_ch(const void *a, const void *b)
{
	return cmp_u32s(a, b, 4);
}
static int cmp_link(const void *a, const void *b)
{
	return cmp_u32s(a, b, 4);
}
static int cmp_route(const void *a, const void *b)
{
	return cmp_u32s(a, b, 3);
}

void state_sort(struct device_state *s)
{
	if (s->nxc)
		qsort(s->xc, s->nxc, sizeof(*s->xc), cmp_xc);
	if (s->nch)
		qsort(s->ch, s->nch, sizeof(*s->ch), cmp_ch);
	if (s->nlinks)
		qsort(s->links, s->nlinks, sizeof(*s->links), cmp_link);
	if (s->nroutes)
		qsort(s->routes, s->nroutes, sizeof(*s->routes), cmp_route);
}

bool state_equal(const struct device_state *a, const struct device_state *b)
{
	return a->nxc == b->nxc && a->nch == b->nch && a->nlinks == b->nlinks &&
	       a->nroutes == b->nroutes &&
	       (!a->nxc || memcmp(a->xc, b->xc, a->nxc * sizeof(*a->xc)) == 0) &&
	       (!a->nch || memcmp(a->ch, b->ch, a->nch * sizeof(*a->ch)) == 0) &&
	       (!a->nlinks || memcmp(a->links, b->links, a->nlinks * sizeof(*a->links)) == 0) &&
	       (!a->nroutes || memcmp(a->routes, b->routes, a->nroutes * sizeof(*a->routes)) == 0);
}

uint32_t state_size(const struct device_state *s)
{
	return s->nxc + s->nch + s->nlinks + s->nroutes;
}

/* An empty switch on a fabric where nothing was committed yet is as
 * recorded: saying it differs sent operators looking for a change nobody
 * made. */
bool state_as_recorded(const struct device_state *rec, const struct device_state *actual)
{
	return rec ? state_equal(rec, actual) : state_size(actual) == 0;
}

static int cmp_u32(const void *a, const void *b)
{
	return cmp_u32s(a, b, 1);
}

static int bad(struct ofc_error *err, const char *fmt, ...) OFC_PRINTF(2, 3);
static int bad(struct ofc_error *err, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE, "%s", msg);
}

/* s is sorted (state_sort), so equal entries are neighbours; egresses are
 * sorted in a copy. */
static int check_switch(const struct device_state *s, uint32_t ports, struct ofc_error *err)
{
	uint32_t *outs = xcalloc((size_t)s->nxc + 1, sizeof(*outs));
	int rc = 0;

	for (uint32_t i = 0; i < s->nxc && rc == 0; i++) {
		const struct xconn *x = &s->xc[i];

		bool in_bad = x->in < 1 || (ports && x->in > ports);

		/* (ports 0: the switch's size is not known here, a record read
		 * without its config; ports still count from 1) */
		if (in_bad || x->out < 1 || (ports && x->out > ports))
			rc = ports ? bad(err,
					 "cross-connect %u -> %u: port %u is outside the switch's "
					 "ports 1..%u",
					 x->in, x->out, in_bad ? x->in : x->out, ports)
				   : bad(err,
					 "cross-connect %u -> %u: port 0 is no port (ports count "
					 "from 1)",
					 x->in, x->out);
		else if (i && s->xc[i - 1].in == x->in)
			rc = bad(err, "ingress %u is cross-connected twice (to %u and %u)", x->in,
				 s->xc[i - 1].out, x->out);
		outs[i] = x->out;
	}
	if (rc == 0 && s->nxc > 1) {
		qsort(outs, s->nxc, sizeof(*outs), cmp_u32);
		for (uint32_t i = 1; i < s->nxc && rc == 0; i++)
			if (outs[i] == outs[i - 1])
				rc = bad(err, "egress %u is cross-connected twice", outs[i]);
	}
	free(outs);
	return rc;
}

static int check_ring(const struct device_state *s, const struct device_cfg *c,
		      struct ofc_error *err)
{
	for (uint32_t i = 0; i < s->nch; i++) {
		const struct mrr_chan *m = &s->ch[i];

		if ((c->ring_nodes && m->node >= c->ring_nodes) ||
		    (c->interfaces && m->iface >= c->interfaces) ||
		    (c->wavelengths && m->wl >= c->wavelengths) ||
		    (m->role != MRR_ADD && m->role != MRR_DROP))
			return bad(err,
				   "channel (node %u, interface %u, wavelength %u, role %u) is not "
				   "on this ring",
				   m->node, m->iface, m->wl, m->role);
		if (i && cmp_ch(&s->ch[i - 1], m) == 0)
			return bad(err, "channel (node %u, interface %u, wavelength %u) twice",
				   m->node, m->iface, m->wl);
	}
	return 0;
}

static int check_hosts(const struct device_state *s, const struct device_cfg *c,
		       struct ofc_error *err)
{
	uint32_t n = c->nhosts, p = c->host_ports;

	for (uint32_t i = 0; i < s->nlinks; i++) {
		const struct hlink *l = &s->links[i];

		if ((n && (l->src_host >= n || l->dst_host >= n)) ||
		    (p && (l->src_port >= p || l->dst_port >= p)))
			return bad(err,
				   "circuit host %u port %u -> host %u port %u is outside "
				   "the testbed",
				   l->src_host, l->src_port, l->dst_host, l->dst_port);
		if (i && cmp_link(&s->links[i - 1], l) == 0)
			return bad(err, "circuit host %u port %u -> host %u port %u twice",
				   l->src_host, l->src_port, l->dst_host, l->dst_port);
	}
	for (uint32_t i = 0; i < s->nroutes; i++) {
		const struct hroute *r = &s->routes[i];

		if ((n && (r->host >= n || r->dst_host >= n)) || (p && r->port >= p))
			return bad(err,
				   "route on host %u to host %u via port %u is outside the "
				   "testbed",
				   r->host, r->dst_host, r->port);
		if (i && cmp_u32s(&s->routes[i - 1].host, &r->host, 2) == 0)
			return bad(err, "two routes on host %u to host %u", r->host, r->dst_host);
	}
	return 0;
}

int state_check(const struct device_state *s, const struct device_cfg *cfg, struct ofc_error *err)
{
	bool sw = cfg->cls == DEV_SWITCH, ring = cfg->cls == DEV_RING,
	     hosts = cfg->cls == DEV_HOSTS;

	if ((s->nxc && !sw) || (s->nch && !ring) || ((s->nlinks || s->nroutes) && !hosts))
		return bad(err, "entries of another kind of device");
	if (sw)
		return check_switch(s, cfg->ports, err);
	if (ring)
		return check_ring(s, cfg, err);
	return check_hosts(s, cfg, err);
}

void batch_add(struct op_batch *b, struct op op)
{
	GROW(b->ops, b->cap, (size_t)b->n + 1);
	b->ops[b->n++] = op;
}

void batch_free(struct op_batch *b)
{
	free(b->ops);
	memset(b, 0, sizeof(*b));
}

/* Merge walk over two sorted arrays: calls gone(x) for entries only in cur
 * and new(x) for entries only in want. */
#define MERGE(cur, want, n, arr, cmp, ONLY_CUR, ONLY_WANT)                                         \
	do {                                                                                       \
		uint32_t i_ = 0, j_ = 0;                                                           \
		while (i_ < (cur)->n || j_ < (want)->n) {                                          \
			int c_ = i_ == (cur)->n	   ? 1                                             \
				 : j_ == (want)->n ? -1                                            \
						   : cmp(&(cur)->arr[i_], &(want)->arr[j_]);       \
			if (c_ < 0) {                                                              \
				ONLY_CUR(&(cur)->arr[i_]);                                         \
				i_++;                                                              \
			} else if (c_ > 0) {                                                       \
				ONLY_WANT(&(want)->arr[j_]);                                       \
				j_++;                                                              \
			} else {                                                                   \
				i_++;                                                              \
				j_++;                                                              \
			}                                                                          \
		}                                                                                  \
	} while (0)

static void diff_switch(const struct device_state *cur, const struct device_state *want,
			struct op_batch *out)
{
	/* By ingress: a port whose egress changes is disconnected, then
	 * connected anew; all disconnects come first so that every egress a
	 * connect needs is free by then (egresses are unique in a state). */
	uint32_t i = 0, j = 0;

	while (i < cur->nxc || j < want->nxc) {
		if (j == want->nxc || (i < cur->nxc && cur->xc[i].in < want->xc[j].in)) {
			batch_add(out, (struct op){.kind = OP_DISCONNECT, .xc = cur->xc[i]});
			i++;
		} else if (i == cur->nxc || want->xc[j].in < cur->xc[i].in) {
			j++;
		} else {
			if (cur->xc[i].out != want->xc[j].out)
				batch_add(out,
					  (struct op){.kind = OP_DISCONNECT, .xc = cur->xc[i]});
			i++;
			j++;
		}
	}
	i = j = 0;
	while (j < want->nxc) {
		while (i < cur->nxc && cur->xc[i].in < want->xc[j].in)
			i++;
		if (i == cur->nxc || cur->xc[i].in != want->xc[j].in ||
		    cur->xc[i].out != want->xc[j].out)
			batch_add(out, (struct op){.kind = OP_CONNECT, .xc = want->xc[j]});
		j++;
	}
}

void state_diff(const struct device_state *cur, const struct device_state *want,
		struct op_batch *out)
{
	diff_switch(cur, want, out);

	/* MRRs in the order that keeps light from circling or colliding on
	 * the way: adds go off first (their light stops), then drops; new
	 * drops come on before the adds whose light they take off the ring.
	 * Reversed (a rollback), the order is just as safe. */
	for (uint32_t role = MRR_ADD, pass = 0; pass < 2; pass++, role = MRR_DROP) {
#define OFF_CH(x)                                                                                  \
	do {                                                                                       \
		if ((x)->role == role)                                                             \
			batch_add(out, (struct op){.kind = OP_TUNE_OFF, .ch = *(x)});              \
	} while (0)
#define NOP(x) (void)(x)
		MERGE(cur, want, nch, ch, cmp_ch, OFF_CH, NOP);
	}
	for (uint32_t role = MRR_DROP, pass = 0; pass < 2; pass++, role = MRR_ADD) {
#define ON_CH(x)                                                                                   \
	do {                                                                                       \
		if ((x)->role == role)                                                             \
			batch_add(out, (struct op){.kind = OP_TUNE_ON, .ch = *(x)});               \
	} while (0)
		MERGE(cur, want, nch, ch, cmp_ch, NOP, ON_CH);
	}

	/* Links, then routes: a route through a port whose circuit goes or
	 * comes must be (re)set, since the kernel removes routes together
	 * with their link. */
	uint32_t link_start = out->n;
#define DEL_LINK(x) batch_add(out, (struct op){.kind = OP_LINK_DEL, .link = *(x)})
#define ADD_LINK(x) batch_add(out, (struct op){.kind = OP_LINK_ADD, .link = *(x)})
	MERGE(cur, want, nlinks, links, cmp_link, DEL_LINK, NOP);
	MERGE(cur, want, nlinks, links, cmp_link, NOP, ADD_LINK);
	uint32_t link_end = out->n;

	/* Routes are keyed by (host, dst_host), one port each. */
	uint32_t i = 0, k = 0;
	while (i < cur->nroutes || k < want->nroutes) {
		int c = i == cur->nroutes ? 1
			: k == want->nroutes
			    ? -1
			    : cmp_u32s(&cur->routes[i].host, &want->routes[k].host, 2);
		if (c < 0) {
			batch_add(out,
				  (struct op){.kind = OP_ROUTE_DEL, .route = cur->routes[i++]});
			continue;
		}
		const struct hroute *r = &want->routes[k++];
		bool touched = c > 0 || cur->routes[i].port != r->port;

		if (c == 0)
			i++;
		for (uint32_t q = link_start; q < link_end && !touched; q++)
			touched = out->ops[q].link.src_host == r->host &&
				  out->ops[q].link.src_port == r->port;
		if (touched)
			batch_add(out, (struct op){.kind = OP_ROUTE_SET, .route = *r});
	}
#undef OFF_CH
#undef ON_CH
#undef NOP
#undef DEL_LINK
#undef ADD_LINK
}

void op_describe(const struct op *op, char *buf, size_t n)
{
	static const char *const role[] = {"?", "add", "drop"};

	switch (op->kind) {
	case OP_DISCONNECT:
		snprintf(buf, n, "disconnect %u -> %u", op->xc.in, op->xc.out);
		break;
	case OP_CONNECT:
		snprintf(buf, n, "connect %u -> %u", op->xc.in, op->xc.out);
		break;
	case OP_TUNE_OFF:
	case OP_TUNE_ON:
		snprintf(buf, n, "tune %s node %u interface %u wavelength %u %s",
			 op->kind == OP_TUNE_ON ? "on" : "off", op->ch.node, op->ch.iface,
			 op->ch.wl, role[op->ch.role < 3 ? op->ch.role : 0]);
		break;
	case OP_LINK_DEL:
	case OP_LINK_ADD:
		snprintf(buf, n, "%s circuit host %u port %u -> host %u port %u",
			 op->kind == OP_LINK_ADD ? "add" : "remove", op->link.src_host,
			 op->link.src_port, op->link.dst_host, op->link.dst_port);
		break;
	case OP_ROUTE_SET:
	case OP_ROUTE_DEL:
		snprintf(buf, n, "%s route on host %u to host %u via port %u",
			 op->kind == OP_ROUTE_SET ? "set" : "remove", op->route.host,
			 op->route.dst_host, op->route.port);
		break;
	default:
		snprintf(buf, n, "unknown operation %d", (int)op->kind);
	}
}

static const char *const fault_names[] = {
    [FAULT_DENY] = "deny",   [FAULT_CLOSE] = "close",	  [FAULT_CLOSE_AFTER] = "close-after",
    [FAULT_STALL] = "stall", [FAULT_GARBAGE] = "garbage", [FAULT_LIE] = "lie",
};

enum fault_mode fault_mode_parse(const char *s)
{
	for (size_t i = 1; i < ARRAY_SIZE(fault_names); i++)
		if (strcmp(s, fault_names[i]) == 0)
			return (enum fault_mode)i;
	return 0;
}

const char *fault_mode_name(enum fault_mode m)
{
	return (size_t)m < ARRAY_SIZE(fault_names) && m ? fault_names[m] : "none";
}
