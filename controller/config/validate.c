/* Validation of a loaded fabric as a whole, after the loader has checked
 * every value on its own: unique names, references that resolve, devices
 * and their drivers, wiring, and whether the wiring can realise the target
 * topology. Also resolves: host indices, explicit wiring, the topology graph,
 * its port permutations and the circuits each switch must hold.
 * Every error names the place in the config it is about. */
#include "controller/config/internal.h"
#include "controller/pick/pick.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NONE UINT32_MAX

/* ---- names ---------------------------------------------------------------- */

static int cmp_host(const void *a, const void *b, void *ctx)
{
	const struct fabric *f = ctx;

	return strcmp(f->hosts[*(const uint32_t *)a].name, f->hosts[*(const uint32_t *)b].name);
}

static int index_hosts(struct fabric *f, struct ofc_error *err)
{
	f->host_index = xmalloc(((size_t)f->nhosts + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < f->nhosts; i++)
		f->host_index[i] = i;
	qsort_r(f->host_index, f->nhosts, sizeof(uint32_t), cmp_host, f);
	for (uint32_t i = 1; i < f->nhosts; i++) {
		const struct host *a = &f->hosts[f->host_index[i - 1]];
		const struct host *b = &f->hosts[f->host_index[i]];

		if (strcmp(a->name, b->name) == 0) {
			const struct host *later = a->loc.line > b->loc.line ? a : b;
			const struct host *first = later == a ? b : a;

			return fabric_error_at(err, f, later->loc,
					       "duplicate host name '%s' (first at line %u)",
					       a->name, first->loc.line);
		}
	}
	return 0;
}

/* Switches and rings share one namespace: both are devices that
 * `--device NAME=HOST:PORT` can point elsewhere. */
static int check_device_names(struct fabric *f, struct ofc_error *err)
{
	uint32_t n = f->nswitches + f->nrings;
	const char **names = xcalloc(n + 1, sizeof(char *));
	struct src_loc *locs = xcalloc(n + 1, sizeof(struct src_loc));
	int rc = 0;

	for (uint32_t i = 0; i < f->nswitches; i++) {
		names[i] = f->switches[i].name;
		locs[i] = f->switches[i].loc;
	}
	for (uint32_t i = 0; i < f->nrings; i++) {
		names[f->nswitches + i] = f->rings[i].name;
		locs[f->nswitches + i] = f->rings[i].loc;
	}
	for (uint32_t i = 0; i < n && rc == 0; i++)
		for (uint32_t j = 0; j < i; j++)
			if (strcmp(names[i], names[j]) == 0) {
				rc =
				    fabric_error_at(err, f, locs[i],
						    "duplicate device name '%s' (first at line %u)",
						    names[i], locs[j].line);
				break;
			}
	free(names);
	free(locs);
	return rc;
}

/* ---- drivers -------------------------------------------------------------- */

static int check_address(const char *addr)
{
	const char *colon;
	uint32_t port;

	if (addr[0] == '[') { /* [v6]:port */
		const char *close = strchr(addr, ']');

		if (!close || close == addr + 1 || close[1] != ':')
			return -1;
		colon = close + 1;
	} else {
		colon = strrchr(addr, ':');
		if (!colon || colon == addr)
			return -1;
	}
	if (parse_u32(colon + 1, &port) < 0 || port < 1 || port > 65535)
		return -1;
	return 0;
}

/* A file the config names, resolved against its directory into *path:
 * readable and regular. */
static int config_file(struct fabric *f, const char *key, const char *name, struct src_loc loc,
		       char **path, struct ofc_error *err)
{
	struct stat st;

	free(*path);
	*path = name[0] == '/' ? xstrdup(name) : xasprintf("%s/%s", f->dir, name);
	if (stat(*path, &st) != 0 || access(*path, R_OK) != 0)
		return fabric_error_at(err, f, loc, "%s file '%s': %s", key, name, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fabric_error_at(err, f, loc, "%s file '%s' is not a regular file", key,
				       name);
	return 0;
}

/* A name a certificate can be issued for: a DNS name or an IP address. */
static bool server_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > 253)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == ':'))
			return false;
	return true;
}

/* netconf's transport (docs/netconf.md): SSH needs credentials and a
 * known-hosts file, TLS credentials (a certificate and its key) and the
 * CA file that signs the device's certificate; a Unix socket neither. */
static int check_transport(struct fabric *f, struct driver_cfg *d, const char *device, bool netconf,
			   bool unix_path, struct ofc_error *err)
{
	bool tls = d->transport == NETCONF_TLS;

	if (!netconf && (d->transport_set || d->tls_ca_set || d->tls_server_name_set))
		return fabric_error_at(err, f,
				       d->transport_set ? d->transport_loc
				       : d->tls_ca_set	? d->tls_ca_loc
							: d->tls_server_name_loc,
				       "'%s' is for driver 'netconf', not '%s'",
				       d->transport_set ? "transport"
				       : d->tls_ca_set	? "tls_ca"
							: "tls_server_name",
				       d->type);
	if (!netconf)
		return 0;
	if (tls && unix_path)
		return fabric_error_at(err, f, d->transport_loc,
				       "'transport: tls' needs 'address: HOST:PORT', not a Unix "
				       "socket");
	if (!tls && (d->tls_ca_set || d->tls_server_name_set))
		return fabric_error_at(
		    err, f, d->tls_ca_set ? d->tls_ca_loc : d->tls_server_name_loc,
		    "'%s' is for 'transport: tls'", d->tls_ca_set ? "tls_ca" : "tls_server_name");
	if (tls && d->known_hosts_set)
		return fabric_error_at(err, f, d->known_hosts_loc,
				       "'known_hosts' is for SSH: with 'transport: tls' the device "
				       "is known by its certificate ('tls_ca')");
	if (tls && (!d->credentials || !d->tls_ca))
		return fabric_error_at(
		    err, f, d->loc,
		    "driver 'netconf' of %s over TLS needs 'credentials: FILE' (a certificate and "
		    "its private key) and 'tls_ca: FILE' (the CA that signs the device's "
		    "certificate)",
		    device);
	if (!tls && !unix_path && (!d->credentials || !d->known_hosts))
		return fabric_error_at(
		    err, f, d->loc,
		    "driver 'netconf' of %s over SSH needs 'credentials: FILE' to "
		    "log in and 'known_hosts: FILE' to know the device",
		    device);
	if (d->tls_server_name && !server_name_ok(d->tls_server_name))
		return fabric_error_at(err, f, d->tls_server_name_loc,
				       "'tls_server_name' must be a DNS name or an IP address, got "
				       "'%.80s'",
				       d->tls_server_name);
	if (d->tls_ca)
		return config_file(f, "tls_ca", d->tls_ca, d->tls_ca_loc, &d->tls_ca_path, err);
	return 0;
}

static int check_driver(struct fabric *f, struct driver_cfg *d, const char *device,
			const char *const *allowed, struct ofc_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	bool ok = false;

	if (!d->present || f->drivers_unchecked)
		return 0;
	for (const char *const *a = allowed; *a; a++) {
		sb_printf(&sb, "%s%s", a == allowed ? "" : " or ", *a);
		if (strcmp(*a, d->type) == 0)
			ok = true;
	}
	if (!ok) {
		fabric_error_at(err, f, d->loc, "driver '%s' cannot drive %s (use %s)", d->type,
				device, sb.buf);
		sb_free(&sb);
		return -1;
	}
	sb_free(&sb);
	bool netconf = strcmp(d->type, "netconf") == 0;
	bool unix_path = netconf && d->address && strncmp(d->address, "unix:", 5) == 0;

	if (strcmp(d->type, "sim") != 0 && !d->address)
		return fabric_error_at(err, f, d->loc,
				       "driver '%s' of %s needs 'address: HOST:PORT'", d->type,
				       device);
	if (unix_path && (d->address[5] != '/' || strlen(d->address) > 5 + 100))
		return fabric_error_at(
		    err, f, d->address_loc,
		    "bad address '%s': expected unix:/ABSOLUTE/PATH (at most 100 "
		    "characters)",
		    d->address);
	if (d->address && !unix_path && check_address(d->address) < 0)
		return fabric_error_at(
		    err, f, d->address_loc,
		    "bad address '%s': expected HOST:PORT with a port in 1..65535%s", d->address,
		    netconf ? " (or unix:PATH)" : "");
	if (!netconf && (d->known_hosts_set || d->datastore_set || d->min_power_set))
		return fabric_error_at(err, f,
				       d->known_hosts_set ? d->known_hosts_loc
				       : d->datastore_set ? d->datastore_loc
							  : d->min_power_loc,
				       "'%s' is for driver 'netconf', not '%s'",
				       d->known_hosts_set ? "known_hosts"
				       : d->datastore_set ? "datastore"
							  : "min_power",
				       d->type);
	if (check_transport(f, d, device, netconf, unix_path, err) < 0)
		return -1;
	if (d->known_hosts) {
		struct stat st;

		free(d->known_hosts_path);
		d->known_hosts_path = d->known_hosts[0] == '/'
					  ? xstrdup(d->known_hosts)
					  : xasprintf("%s/%s", f->dir, d->known_hosts);
		if (stat(d->known_hosts_path, &st) != 0 || access(d->known_hosts_path, R_OK) != 0)
			return fabric_error_at(err, f, d->known_hosts_loc,
					       "known_hosts file '%s': %s", d->known_hosts,
					       strerror(errno));
		if (!S_ISREG(st.st_mode))
			return fabric_error_at(err, f, d->known_hosts_loc,
					       "known_hosts file '%s' is not a regular file",
					       d->known_hosts);
	}
	if (d->dialect_set && strcmp(d->type, "tl1") != 0)
		return fabric_error_at(err, f, d->dialect_loc,
				       "'dialect' is for driver 'tl1', not '%s'", d->type);
	if (d->port_map_set && d->dialect != TL1_CALIENT)
		return fabric_error_at(
		    err, f, d->port_map_loc,
		    "'port_map' names Calient ports: it needs 'dialect: calient'");
	if (strcmp(d->type, "tl1") == 0 && !d->credentials)
		return fabric_error_at(err, f, d->loc,
				       "driver 'tl1' of %s needs 'credentials: FILE' to log in",
				       device);
	if (d->credentials) {
		struct stat st;

		free(d->credentials_path);
		d->credentials_path = d->credentials[0] == '/'
					  ? xstrdup(d->credentials)
					  : xasprintf("%s/%s", f->dir, d->credentials);
		if (stat(d->credentials_path, &st) != 0 || access(d->credentials_path, R_OK) != 0)
			return fabric_error_at(err, f, d->credentials_loc,
					       "credentials file '%s': %s", d->credentials,
					       strerror(errno));
		if (!S_ISREG(st.st_mode))
			return fabric_error_at(err, f, d->credentials_loc,
					       "credentials file '%s' is not a regular file",
					       d->credentials);
	}
	return 0;
}

static int check_switches(struct fabric *f, struct ofc_error *err)
{
	static const char *const ocs_drivers[] = {"tl1", "netconf", "sim", NULL};
	static const char *const panel_drivers[] = {"patch-panel", "netconf", "sim", NULL};

	for (uint32_t i = 0; i < f->nswitches; i++) {
		struct fswitch *s = &f->switches[i];
		char what[96];

		snprintf(what, sizeof(what), "%s '%s'",
			 s->kind == SWITCH_OCS ? "optical circuit switch" : "patch panel", s->name);
		if (s->kind == SWITCH_OCS) {
			if (s->move_set)
				return fabric_error_at(
				    err, f, s->move_loc,
				    "'move_time' is for patch panels; an OCS takes "
				    "'reconfig_time'");
			if (!s->reconfig_set)
				s->reconfig_time = 10e-3;
		} else {
			if (s->reconfig_set)
				return fabric_error_at(
				    err, f, s->reconfig_loc,
				    "'reconfig_time' is for optical circuit switches; a patch "
				    "panel takes 'move_time' (per move)");
			if (!s->move_set)
				s->move_time = 60;
		}
		if (check_driver(f, &s->driver, what,
				 s->kind == SWITCH_OCS ? ocs_drivers : panel_drivers, err) < 0)
			return -1;
	}
	return 0;
}

/* ---- rings ---------------------------------------------------------------- */

static int check_rings(struct fabric *f, struct ofc_error *err)
{
	static const char *const ring_drivers[] = {"mrr", "sim", NULL};
	uint8_t *seen = xcalloc(f->nhosts + 1, 1);
	int rc = 0;

	for (uint32_t i = 0; i < f->nrings && rc == 0; i++) {
		struct ring *r = &f->rings[i];
		char what[96];

		r->nmembers = r->all_nodes ? f->nhosts : r->nnode_names;
		r->members = xcalloc(r->nmembers + 1, sizeof(uint32_t));
		memset(seen, 0, f->nhosts);
		for (uint32_t k = 0; k < r->nmembers; k++) {
			int h = r->all_nodes ? (int)k : fabric_find_host(f, r->node_names[k]);

			if (h < 0) {
				rc = fabric_error_at(err, f, r->node_locs[k],
						     "ring '%s': no host named '%s'", r->name,
						     r->node_names[k]);
				break;
			}
			if (seen[h]) {
				rc = fabric_error_at(err, f, r->node_locs[k],
						     "ring '%s': host '%s' appears twice", r->name,
						     f->hosts[h].name);
				break;
			}
			seen[h] = 1;
			r->members[k] = (uint32_t)h;
		}
		if (rc)
			break;
		if (r->nmembers < 2) {
			rc = fabric_error_at(err, f, r->nodes_loc,
					     "ring '%s' has %u node%s; a ring needs at least 2",
					     r->name, r->nmembers, r->nmembers == 1 ? "" : "s");
			break;
		}
		if (r->mrrs == 0)
			r->mrrs = r->wavelengths;
		snprintf(what, sizeof(what), "ring '%s'", r->name);
		rc = check_driver(f, &r->driver, what, ring_drivers, err);
		if (rc == 0)
			rc = ring_check_lightpaths(f, i, err);
	}
	free(seen);
	return rc;
}

/* ---- wiring --------------------------------------------------------------- */

struct wiring_ctx {
	uint32_t maxports;
	uint32_t *by_host_port;	   /* host * maxports + port -> attachment index */
	uint32_t **by_switch_port; /* per switch: port -> attachment index */
};

static int add_attachment(struct fabric *f, struct wiring_ctx *w, struct attachment a,
			  struct ofc_error *err)
{
	const struct fswitch *s = &f->switches[a.sw];

	if (a.sw_port < 1 || a.sw_port > s->ports)
		return fabric_error_at(err, f, a.loc,
				       "switch '%s' has ports 1..%u; there is no port %u", s->name,
				       s->ports, a.sw_port);
	uint32_t *hp = &w->by_host_port[(size_t)a.host * w->maxports + a.host_port];
	uint32_t *sp = &w->by_switch_port[a.sw][a.sw_port];
	if (*hp != NONE)
		return fabric_error_at(err, f, a.loc, "host port %s:%u is already wired (line %u)",
				       f->hosts[a.host].name, a.host_port, f->wiring[*hp].loc.line);
	if (*sp != NONE)
		return fabric_error_at(err, f, a.loc,
				       "switch port %s:%u is already wired to %s:%u (line %u)",
				       s->name, a.sw_port, f->hosts[f->wiring[*sp].host].name,
				       f->wiring[*sp].host_port, f->wiring[*sp].loc.line);
	*hp = *sp = f->nwiring;
	a.host_name = a.switch_name = NULL;
	f->wiring[f->nwiring++] = a;
	return 0;
}

static int resolve_switch_list(struct fabric *f, uint32_t *out, struct ofc_error *err)
{
	const struct wiring_cfg *wc = &f->wiring_cfg;

	for (uint32_t i = 0; i < wc->nswitch_names; i++) {
		int s = fabric_find_switch(f, wc->switch_names[i]);

		if (s < 0)
			return fabric_error_at(err, f, wc->switch_locs[i],
					       "wiring: no switch named '%s'", wc->switch_names[i]);
		out[i] = (uint32_t)s;
	}
	return 0;
}

/* Port moves (ofcd's re-wiring around a lost port): the two host ports
 * trade switch ports, on one switch. Positions are the config's wiring:
 * a move is no part of the file. */
static int apply_moves(struct fabric *f, struct wiring_ctx *w, struct ofc_error *err)
{
	for (uint32_t i = 0; i < f->nmoves; i++) {
		const struct port_move *m = &f->moves[i];
		int h = fabric_find_host(f, m->host);
		uint32_t ia = UINT32_MAX, ib = UINT32_MAX;

		if (h >= 0 && m->from < w->maxports && m->to < w->maxports) {
			ia = w->by_host_port[(size_t)h * w->maxports + m->from];
			ib = w->by_host_port[(size_t)h * w->maxports + m->to];
		}
		if (ia == UINT32_MAX || ib == UINT32_MAX || m->from == m->to)
			return fabric_error_at(
			    err, f, f->wiring_cfg.loc,
			    "moved port %s:%u -> %s:%u: both must be wired ports of the host",
			    m->host, m->from, m->host, m->to);
		struct attachment *a = &f->wiring[ia], *b = &f->wiring[ib];
		if (a->sw != b->sw)
			return fabric_error_at(
			    err, f, f->wiring_cfg.loc,
			    "moved port %s:%u -> %s:%u: the two are cabled to different "
			    "switches",
			    m->host, m->from, m->host, m->to);
		uint32_t k = a->sw_port;
		a->sw_port = b->sw_port;
		b->sw_port = k;
		w->by_switch_port[a->sw][a->sw_port] = ia;
		w->by_switch_port[b->sw][b->sw_port] = ib;
	}
	return 0;
}

static int check_wiring(struct fabric *f, struct wiring_ctx *w, struct ofc_error *err)
{
	const struct wiring_cfg *wc = &f->wiring_cfg;
	uint64_t host_ports = 0;
	uint32_t *sw = NULL;
	int rc = 0;

	w->maxports = 1;
	for (uint32_t h = 0; h < f->nhosts; h++) {
		host_ports += f->hosts[h].ports;
		if (f->hosts[h].ports > w->maxports)
			w->maxports = f->hosts[h].ports;
	}
	w->by_host_port = xmalloc(((size_t)f->nhosts * w->maxports + 1) * sizeof(uint32_t));
	memset(w->by_host_port, 0xff, (size_t)f->nhosts * w->maxports * sizeof(uint32_t));
	w->by_switch_port = xcalloc(f->nswitches + 1, sizeof(uint32_t *));
	for (uint32_t s = 0; s < f->nswitches; s++) {
		w->by_switch_port[s] =
		    xmalloc(((size_t)f->switches[s].ports + 1) * sizeof(uint32_t));
		memset(w->by_switch_port[s], 0xff,
		       ((size_t)f->switches[s].ports + 1) * sizeof(uint32_t));
	}
	if (wc->pattern == WIRING_NONE)
		return 0;
	f->wiring = xcalloc(host_ports + wc->nexplicit + 1, sizeof(struct attachment));
	sw = xcalloc(wc->nswitch_names + 1, sizeof(uint32_t));
	if (resolve_switch_list(f, sw, err) < 0) {
		free(sw);
		return -1;
	}

	if (wc->pattern == WIRING_SEQUENTIAL) {
		uint64_t capacity = 0;
		uint32_t s = 0, port = wc->first_port;

		for (uint32_t i = 0; i < wc->nswitch_names; i++)
			if (f->switches[sw[i]].ports >= wc->first_port)
				capacity += f->switches[sw[i]].ports - wc->first_port + 1;
		if (host_ports > capacity) {
			rc = fabric_error_at(
			    err, f, wc->loc,
			    "more host ports than switch ports: %u hosts have %llu ports, the "
			    "listed switches have %llu from port %u on",
			    f->nhosts, (unsigned long long)host_ports, (unsigned long long)capacity,
			    wc->first_port);
			goto out;
		}
		for (uint32_t h = 0; h < f->nhosts && rc == 0; h++)
			for (uint32_t p = 0; p < f->hosts[h].ports && rc == 0; p++) {
				while (port > f->switches[sw[s]].ports) {
					s++;
					port = wc->first_port;
				}
				struct attachment a = {.loc = wc->loc,
						       .host = h,
						       .host_port = p,
						       .sw = sw[s],
						       .sw_port = port++};
				rc = add_attachment(f, w, a, err);
			}
	} else if (wc->pattern == WIRING_PER_PORT) {
		uint32_t need = 0;

		for (uint32_t h = 0; h < f->nhosts; h++)
			need = f->hosts[h].ports > need ? f->hosts[h].ports : need;
		if (wc->nswitch_names < need) {
			rc = fabric_error_at(
			    err, f, wc->loc,
			    "per-port wiring needs one switch per host port: hosts have up to "
			    "%u ports but %u switch%s listed",
			    need, wc->nswitch_names, wc->nswitch_names == 1 ? " is" : "es are");
			goto out;
		}
		for (uint32_t p = 0; p < need; p++) {
			const struct fswitch *x = &f->switches[sw[p]];

			if ((uint64_t)wc->first_port + f->nhosts - 1 > x->ports) {
				rc = fabric_error_at(
				    err, f, wc->switch_locs[p],
				    "more host ports than switch ports: switch '%s' has %u "
				    "ports but %u hosts need one each from port %u",
				    x->name, x->ports, f->nhosts, wc->first_port);
				goto out;
			}
		}
		for (uint32_t h = 0; h < f->nhosts && rc == 0; h++)
			for (uint32_t p = 0; p < f->hosts[h].ports && rc == 0; p++) {
				struct attachment a = {.loc = wc->loc,
						       .host = h,
						       .host_port = p,
						       .sw = sw[p],
						       .sw_port = wc->first_port + h};
				rc = add_attachment(f, w, a, err);
			}
	} else { /* explicit */
		for (uint32_t i = 0; i < wc->nexplicit && rc == 0; i++) {
			struct attachment a = wc->explicit_list[i];
			int h = fabric_find_host(f, a.host_name);
			int s = fabric_find_switch(f, a.switch_name);

			if (h < 0) {
				rc = fabric_error_at(err, f, a.loc, "wiring: no host named '%s'",
						     a.host_name);
				break;
			}
			if (s < 0) {
				rc = fabric_error_at(err, f, a.loc, "wiring: no switch named '%s'",
						     a.switch_name);
				break;
			}
			if (a.host_port >= f->hosts[h].ports) {
				rc = fabric_error_at(
				    err, f, a.loc, "host '%s' has ports 0..%u; there is no port %u",
				    a.host_name, f->hosts[h].ports - 1, a.host_port);
				break;
			}
			a.host = (uint32_t)h;
			a.sw = (uint32_t)s;
			rc = add_attachment(f, w, a, err);
		}
	}
out:
	free(sw);
	if (rc == 0)
		rc = apply_moves(f, w, err);
	return rc;
}

/* ---- topology ------------------------------------------------------------- */

/* A spec error at column c of the spec becomes a config position. */
static int spec_error(struct fabric *f, const struct ofc_error *sub, struct ofc_error *err)
{
	const struct topo_target *t = &f->topology;
	struct src_loc loc = t->spec_loc;

	if (sub->col)
		loc.col += t->spec_quoted + sub->col - 1;
	return fabric_error_at(err, f, loc, "topology '%s': %s", t->spec, sub->msg);
}

/* topology: auto -> the finder's pick for N hosts of (the fewest) ports,
 * minimising the summed time of the config's collectives under its cost
 * model (the use case of controller/pick), asked of the picker: the finder
 * here, or a planner process for ofcd (config.h). */
static int pick_topology(struct fabric *f, const struct topo_picker *picker, struct ofc_error *err)
{
	struct topo_target *t = &f->topology;
	struct pick_work work[64];
	struct pick_request q = {.nodes = f->nhosts, .degree = pick_degree(f), .work = work};

	pick_model_of(f, &q.model);
	if (q.degree == 0 || q.degree >= f->nhosts)
		return fabric_error_at(
		    err, f, t->spec_loc,
		    "topology 'auto': %u hosts with %u ports each have no direct-connect "
		    "topology to choose",
		    f->nhosts, q.degree);
	for (uint32_t i = 0; i < f->ncollectives && q.nwork < ARRAY_SIZE(work); i++) {
		enum sched_collective op = f->collectives[i].op;

		if (op != SCHED_ALLGATHER && op != SCHED_REDUCE_SCATTER && op != SCHED_ALLREDUCE)
			continue;
		work[q.nwork++] =
		    (struct pick_work){.op = op, .size = f->collectives[i].size, .weight = 1};
	}
	if (!q.nwork)
		return fabric_error_at(
		    err, f, t->spec_loc,
		    "topology 'auto' needs a collective to choose for: add an allgather, "
		    "reduce-scatter or allreduce under 'collectives'");
	if (!picker)
		return fabric_error_at(err, f, t->spec_loc,
				       "topology 'auto': nothing here picks a topology (a config "
				       "with a topology of its own is expected)");
	char *spec = NULL;
	double time_us = 0;
	struct ofc_error sub = {0};
	if (picker->pick(picker, &q, &spec, &time_us, &sub) < 0) {
		fabric_error_at(err, f, t->spec_loc, "topology 'auto': %s", sub.msg);
		/* (a planner process that ended is no fault of the config's) */
		err->code = sub.code == OFC_E_RUNTIME ? OFC_E_RUNTIME : OFC_E_INPUT;
		return -1;
	}
	t->auto_time_us = time_us;
	free(t->spec);
	t->spec = spec;
	t->auto_picked = true;
	return 0;
}

static int check_topology(struct fabric *f, const struct topo_picker *picker, struct ofc_error *err)
{
	struct topo_target *t = &f->topology;
	struct ofc_error sub;
	uint32_t min_ports = UINT32_MAX, min_host = 0;

	if (!t->present)
		return 0;
	if (strcmp(t->spec, "auto") == 0 && pick_topology(f, picker, err) < 0)
		return -1;
	ofc_error_clear(&sub);
	if (fabric_topo_build(f, t->spec, &f->graph, &sub) < 0) {
		/* A spec error is placed in the spec; an edge list's at its
		 * FILE:LINE:COL; a file that could not be read at the key. */
		if (sub.line)
			return fabric_error_at(err, f, t->spec_loc, "topology '%s': %s:%u:%u: %s",
					       t->spec, sub.file, sub.line, sub.col, sub.msg);
		if (strncmp(t->spec, "edges:", 6) == 0)
			return fabric_error_at(err, f, t->spec_loc, "topology '%s': %s", t->spec,
					       sub.msg);
		return spec_error(f, &sub, err);
	}
	if (f->graph->n != f->nhosts)
		return fabric_error_at(err, f, t->spec_loc,
				       "topology '%s' has %u nodes but the fabric has %u hosts",
				       f->graph->spec, f->graph->n, f->nhosts);
	topo_facts(f->graph, &f->facts, 0);
	t->split = !f->facts.strongly_connected;
	if (t->split && !f->workload.present)
		return fabric_error_at(
		    err, f, t->spec_loc,
		    "topology '%s' is not strongly connected: some hosts could never reach "
		    "others",
		    f->graph->spec);
	for (uint32_t h = 0; h < f->nhosts; h++)
		if (f->hosts[h].ports < min_ports) {
			min_ports = f->hosts[h].ports;
			min_host = h;
		}
	if (f->facts.max_out > min_ports || f->facts.max_in > min_ports)
		return fabric_error_at(
		    err, f, t->spec_loc,
		    "topology '%s' needs %u ports per host but host '%s' has %u", f->graph->spec,
		    f->facts.max_out > f->facts.max_in ? f->facts.max_out : f->facts.max_in,
		    f->hosts[min_host].name, min_ports);

	bool wired = f->wiring_cfg.pattern != WIRING_NONE;
	if (!f->facts.regular) {
		if (wired)
			return fabric_error_at(
			    err, f, t->spec_loc,
			    "topology '%s' is not regular: a switch fabric cannot realise it "
			    "as port permutations",
			    f->graph->spec);
		return 0;
	}
	if (topo_ports(f->graph, &f->ports, &sub) < 0)
		return spec_error(f, &sub, err);
	if (!wired) {
		if (f->nswitches)
			return fabric_error_at(
			    err, f, t->spec_loc,
			    "topology '%s' needs circuits but no host is wired to a switch "
			    "(add 'wiring')",
			    f->graph->spec);
		return 0;
	}

	return fabric_circuits(f, err);
}

/* ---- failures ---------------------------------------------------------------- */

/* The first arc u -> v not marked gone, or UINT32_MAX. */
static uint32_t live_arc(const struct graph *g, const bool *gone, uint32_t u, uint32_t v)
{
	for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
		if (g->adj[a] == v && !gone[a])
			return a;
	return UINT32_MAX;
}

/* The node whose port j transmits to v, for every j < pm->d and v: each
 * row of pm->to inverted, or NULL where a row is not a permutation (then
 * mark_port scans the row). A switch lost fails port j of every host: a
 * scan of the row for each is n^2, 4.3e9 steps at 65,536 hosts. */
static uint32_t *port_sources(const struct port_map *pm, uint32_t n)
{
	uint32_t *inv = xmalloc(((size_t)pm->d * n + 1) * sizeof(uint32_t));

	memset(inv, 0xff, (size_t)pm->d * n * sizeof(uint32_t));
	for (uint32_t j = 0; j < pm->d; j++)
		for (uint32_t w = 0; w < n; w++) {
			uint32_t v = pm->to[(size_t)j * n + w];

			if (v >= n || inv[(size_t)j * n + v] != UINT32_MAX) {
				free(inv);
				return NULL;
			}
			inv[(size_t)j * n + v] = w;
		}
	return inv;
}

static int mark_port(struct fabric *f, bool *gone, const uint32_t *inv, uint32_t u, uint32_t j,
		     struct src_loc loc, struct ofc_error *err)
{
	const struct port_map *pm = &f->ports;
	uint32_t n = f->graph->n;

	if (j >= f->hosts[u].ports)
		return fabric_error_at(err, f, loc, "host '%s' has ports 0..%u, not %u",
				       f->hosts[u].name, f->hosts[u].ports - 1, j);
	if (!pm->to)
		return fabric_error_at(
		    err, f, loc,
		    "failed_ports needs a topology whose ports are permutations (a regular "
		    "one); '%s' is not: name the links in topology's failed_links",
		    f->graph->spec);
	if (j >= pm->d)
		return 0; /* a port the topology leaves dark */
	/* Its transmit fibre carries the arc to to[j][u]; its receive fibre
	 * the arc from the node whose port j transmits to u. */
	uint32_t v = pm->to[(size_t)j * n + u], a;
	if (v != u && (a = live_arc(f->graph, gone, u, v)) != UINT32_MAX)
		gone[a] = true;
	for (uint32_t w = inv ? inv[(size_t)j * n + u] : 0; w < n; w++) {
		if (w != u && pm->to[(size_t)j * n + w] == u &&
		    (a = live_arc(f->graph, gone, w, u)) != UINT32_MAX)
			gone[a] = true;
		if (inv)
			break; /* (the only one) */
	}
	return 0;
}

/* The topology's port that physical port j of host h carries now (a port
 * move swaps the two). */
static uint32_t moved_port(const struct fabric *f, uint32_t h, uint32_t j)
{
	for (uint32_t i = 0; i < f->nmoves; i++)
		if (strcmp(f->moves[i].host, f->hosts[h].name) == 0) {
			if (f->moves[i].from == j)
				return f->moves[i].to;
			if (f->moves[i].to == j)
				return f->moves[i].from;
		}
	return j;
}

/* A move takes a port the topology uses onto one it leaves dark. */
static int check_moves(struct fabric *f, struct ofc_error *err)
{
	for (uint32_t i = 0; i < f->nmoves; i++) {
		const struct port_move *m = &f->moves[i];

		if (!f->ports.to || m->from >= f->ports.d || m->to < f->ports.d)
			return fabric_error_at(
			    err, f, f->wiring_cfg.loc,
			    "moved port %s:%u -> %s:%u: the topology must use the first and "
			    "leave the second dark",
			    m->host, m->from, m->host, m->to);
	}
	return 0;
}

/* The hosts the topology's failed_hosts names, marked failed (once: a
 * host named twice is an error). */
static int mark_failed_hosts(struct fabric *f, struct ofc_error *err)
{
	const struct topo_target *t = &f->topology;

	for (uint32_t i = 0; i < t->nfailed_hosts; i++) {
		const struct failed_host *fh = &t->failed_hosts[i];
		int h = fabric_find_host(f, fh->name);

		if (h < 0)
			return fabric_error_at(err, f, fh->loc, "failed host: no host '%s'",
					       fh->name);
		if (f->hosts[h].failed)
			return fabric_error_at(err, f, fh->loc,
					       "failed host '%s' is named twice (line %u)",
					       fh->name, f->hosts[h].failed_loc.line);
		f->hosts[h].failed = true;
		f->hosts[h].failed_loc = fh->loc;
	}
	return 0;
}

/* Failed hosts, ports and links: the graph schedules run on,
 * f->degraded, is the target topology less what failed. A failed host
 * (`failed: true`, or named in the topology's failed_hosts) keeps its node
 * without arcs; the others must still reach one another. renumbered: the
 * topology was relabelled after validation (fabric_failures_renumbered),
 * so a failed link it no longer has is out of effect, not an error. */
static int degrade(struct fabric *f, bool renumbered, struct ofc_error *err)
{
	const struct topo_target *t = &f->topology;
	struct src_loc first = {0};
	uint32_t nports = 0;

	f->nfailed_hosts = 0;
	for (uint32_t h = 0; h < f->nhosts; h++) {
		if (f->hosts[h].failed) {
			if (!first.line)
				first = f->hosts[h].failed_loc;
			f->nfailed_hosts++;
		}
		if (f->hosts[h].nfailed_ports && !first.line)
			first = f->hosts[h].failed_port_locs[0];
		nports += f->hosts[h].nfailed_ports;
	}
	if (!nports && !t->nfailed_links && !f->nfailed_hosts)
		return 0;
	if (t->nfailed_links)
		first = t->failed_links[0].loc;
	if (!f->graph)
		return fabric_error_at(err, f, first,
				       "failed hosts, ports and links need a target 'topology'");
	if (f->nhosts - f->nfailed_hosts < 2)
		return fabric_error_at(
		    err, f, first,
		    "with %u of %u hosts failed there is no collective left to schedule",
		    f->nfailed_hosts, f->nhosts);

	bool *gone = xcalloc((size_t)f->graph->m + 1, sizeof(bool));
	uint8_t *dead = xcalloc((size_t)f->nhosts + 1, 1);
	uint32_t *inv = NULL;
	struct strbuf spec = STRBUF_INIT;
	const char *sep = "";
	int rc = -1;

	sb_printf(&spec, "%s without ", f->graph->spec);
	for (uint32_t i = 0; i < t->nfailed_links; i++) {
		const struct failed_link *fl = &t->failed_links[i];
		int a = fabric_find_host(f, fl->a), b = fabric_find_host(f, fl->b);
		uint32_t x, y;

		if (a < 0 || b < 0) {
			fabric_error_at(err, f, fl->loc, "failed link: no host '%s'",
					a < 0 ? fl->a : fl->b);
			goto out;
		}
		x = live_arc(f->graph, gone, (uint32_t)a, (uint32_t)b);
		if (x != UINT32_MAX)
			gone[x] = true;
		y = live_arc(f->graph, gone, (uint32_t)b, (uint32_t)a);
		if (y != UINT32_MAX)
			gone[y] = true;
		if (x == UINT32_MAX && y == UINT32_MAX && renumbered)
			continue;
		if (x == UINT32_MAX && y == UINT32_MAX) {
			fabric_error_at(
			    err, f, fl->loc,
			    "failed link %s-%s: topology '%s' has no link between them (or it is "
			    "named twice)",
			    fl->a, fl->b, f->graph->spec);
			goto out;
		}
		sb_printf(&spec, "%s%s-%s", sep, fl->a, fl->b);
		sep = ",";
	}
	inv = nports && f->ports.to && f->ports.n == f->graph->n
		  ? port_sources(&f->ports, f->graph->n)
		  : NULL;
	for (uint32_t h = 0; h < f->nhosts; h++)
		for (uint32_t k = 0; k < f->hosts[h].nfailed_ports; k++) {
			uint32_t j = moved_port(f, h, f->hosts[h].failed_ports[k]);

			if (mark_port(f, gone, inv, h, j, f->hosts[h].failed_port_locs[k], err) < 0)
				goto out;
			if (j >= f->ports.d)
				continue; /* dark (or moved off): it carried nothing */
			sb_printf(&spec, "%s%s:%u", sep, f->hosts[h].name,
				  f->hosts[h].failed_ports[k]);
			sep = ",";
		}
	/* A failed host: every arc to or from it. */
	for (uint32_t u = 0; u < f->graph->n; u++)
		for (uint32_t a = f->graph->off[u]; a < f->graph->off[u + 1]; a++)
			if (f->hosts[u].failed || f->hosts[f->graph->adj[a]].failed)
				gone[a] = true;
	for (uint32_t h = 0; h < f->nhosts; h++)
		if (f->hosts[h].failed) {
			dead[h] = 1;
			sb_printf(&spec, "%s%s", sep, f->hosts[h].name);
			sep = ",";
		}
	if (!*sep) { /* only dark ports failed: the graph is whole */
		rc = 0;
		goto out;
	}
	f->degraded = topo_without_arcs(f->graph, gone, spec.buf);
	/* The survivors must reach one another (the failed hosts take no part). */
	uint32_t *keep, nkeep;
	struct graph *alive = topo_survivors(f->degraded, dead, spec.buf, &keep, &nkeep);
	/* (Its strong components, linear: topo_facts's all-pairs searches
	 * for the diameter took 2 s of every failure report at 8,192 hosts.) */
	uint32_t *comp = xmalloc(((size_t)alive->n + 1) * sizeof(uint32_t));
	bool connected = topo_components(alive, comp) <= 1;
	free(comp);
	graph_free(alive);
	free(keep);
	if (!connected && !f->topology.split) {
		fabric_error_at(
		    err, f, first,
		    "with these failures topology '%s' is no longer strongly connected: some "
		    "%shosts could never reach others",
		    f->graph->spec, f->nfailed_hosts ? "surviving " : "");
		goto out;
	}
	rc = 0;
out:
	free(gone);
	free(dead);
	free(inv);
	sb_free(&spec);
	return rc;
}

int fabric_failures_renumbered(struct fabric *f, struct ofc_error *err)
{
	graph_free(f->degraded);
	f->degraded = NULL;
	return degrade(f, true, err);
}

/* Per-port and per-link rates: a host's port_rates name every
 * port; a link_rates entry names a link of the topology, once. */
static int check_rates(struct fabric *f, struct ofc_error *err)
{
	struct topo_target *t = &f->topology;

	for (uint32_t h = 0; h < f->nhosts; h++) {
		const struct host *ho = &f->hosts[h];

		if (ho->port_rates.n && ho->port_rates.n != ho->ports)
			return fabric_error_at(
			    err, f, ho->port_rates.loc,
			    "host '%s' has %u port%s but port_rates lists %u rate%s", ho->name,
			    ho->ports, ho->ports == 1 ? "" : "s", ho->port_rates.n,
			    ho->port_rates.n == 1 ? "" : "s");
	}
	if (!t->nlink_rates)
		return 0;
	if (!f->graph)
		return fabric_error_at(err, f, t->link_rates[0].loc,
				       "link_rates need a target 'topology'");
	for (uint32_t i = 0; i < t->nlink_rates; i++) {
		struct link_rate *lr = &t->link_rates[i];
		int a = fabric_find_host(f, lr->a), b = fabric_find_host(f, lr->b);
		bool arc = false;

		if (a < 0 || b < 0)
			return fabric_error_at(err, f, lr->loc, "link rate: no host '%s'",
					       a < 0 ? lr->a : lr->b);
		for (uint32_t x = f->graph->off[a]; x < f->graph->off[a + 1] && !arc; x++)
			arc = f->graph->adj[x] == (uint32_t)b;
		for (uint32_t x = f->graph->off[b]; x < f->graph->off[b + 1] && !arc; x++)
			arc = f->graph->adj[x] == (uint32_t)a;
		if (!arc || a == b)
			return fabric_error_at(
			    err, f, lr->loc,
			    "link rate %s-%s: topology '%s' has no link between them", lr->a, lr->b,
			    f->graph->spec);
		for (uint32_t k = 0; k < i; k++)
			if ((t->link_rates[k].u == (uint32_t)a &&
			     t->link_rates[k].v == (uint32_t)b) ||
			    (t->link_rates[k].u == (uint32_t)b &&
			     t->link_rates[k].v == (uint32_t)a))
				return fabric_error_at(err, f, lr->loc,
						       "link %s-%s has a rate already (line %u)",
						       lr->a, lr->b, t->link_rates[k].loc.line);
		lr->u = (uint32_t)a;
		lr->v = (uint32_t)b;
	}
	return 0;
}

static void widen(struct cost_model *c, double r)
{
	if (r > 0 && (c->rate_min == 0 || r < c->rate_min))
		c->rate_min = r;
	if (r > c->rate_max)
		c->rate_max = r;
}

/* ---- partitions ------------------------------------------------------------ */

/* A partition's topology has one node per member and is strongly
 * connected; `auto` is not offered per partition yet. */
static int check_partition_topology(struct fabric *f, const struct partition *p,
				    struct ofc_error *err)
{
	const struct topo_target *t = &p->topology;
	struct ofc_error sub;
	struct graph *g = NULL;
	struct topo_facts facts;

	if (!t->present)
		return 0;
	if (strcmp(t->spec, "auto") == 0)
		return fabric_error_at(
		    err, f, t->spec_loc,
		    "partition '%s': topology 'auto' is not supported in a partition yet", p->name);
	if (t->nfailed_links)
		return fabric_error_at(
		    err, f, t->failed_links[0].loc,
		    "partition '%s': failed_links belong to the fabric's topology, not a "
		    "partition's",
		    p->name);
	if (t->nfailed_hosts)
		return fabric_error_at(
		    err, f, t->failed_hosts[0].loc,
		    "partition '%s': failed_hosts belong to the fabric's topology, not a "
		    "partition's",
		    p->name);
	ofc_error_clear(&sub);
	if (fabric_topo_build(f, t->spec, &g, &sub) < 0) {
		struct src_loc loc = t->spec_loc;

		if (sub.line)
			return fabric_error_at(
			    err, f, loc, "partition '%s': topology '%s': %s:%u:%u: %s", p->name,
			    t->spec, sub.file, sub.line, sub.col, sub.msg);
		if (sub.col)
			loc.col += t->spec_quoted + sub.col - 1;
		return fabric_error_at(err, f, loc, "partition '%s': topology '%s': %s", p->name,
				       t->spec, sub.msg);
	}
	int rc = 0;
	if (g->n != p->nmembers)
		rc = fabric_error_at(
		    err, f, t->spec_loc,
		    "partition '%s': topology '%s' has %u nodes but the partition has %u "
		    "members",
		    p->name, g->spec, g->n, p->nmembers);
	else {
		topo_facts(g, &facts, 0);
		if (!facts.strongly_connected)
			rc = fabric_error_at(
			    err, f, t->spec_loc,
			    "partition '%s': topology '%s' is not strongly connected", p->name,
			    g->spec);
	}
	graph_free(g);
	return rc;
}

/* Resolve each partition's members to host ports and refuse a port two
 * partitions claim, at the second claim. */
static int check_partitions(struct fabric *f, struct ofc_error *err)
{
	uint32_t **owner; /* per host, per port: partition + 1, member index */
	uint32_t **owner_m;
	int rc = -1;

	if (f->npartitions == 0)
		return 0;
	owner = xcalloc(f->nhosts, sizeof(*owner));
	owner_m = xcalloc(f->nhosts, sizeof(*owner_m));
	for (uint32_t i = 0; i < f->npartitions; i++) {
		struct partition *p = &f->partitions[i];

		for (uint32_t j = 0; j < i; j++)
			if (strcmp(f->partitions[j].name, p->name) == 0) {
				fabric_error_at(err, f, p->loc,
						"duplicate partition name '%s' (first at line %u)",
						p->name, f->partitions[j].loc.line);
				goto out;
			}
		p->member_host = xcalloc(p->nmembers, sizeof(uint32_t));
		p->member_port = xcalloc(p->nmembers, sizeof(uint32_t));
		for (uint32_t m = 0; m < p->nmembers; m++) {
			char host[256];
			const char *colon = strchr(p->members[m], ':');
			size_t hl = colon ? (size_t)(colon - p->members[m]) : strlen(p->members[m]);
			uint32_t port = colon ? (uint32_t)strtoul(colon + 1, NULL, 10) : NONE;

			snprintf(host, sizeof(host), "%.*s", (int)hl, p->members[m]);
			int h = fabric_find_host(f, host);

			if (h < 0) {
				fabric_error_at(err, f, p->member_locs[m],
						"partition '%s': no host named '%s'", p->name,
						host);
				goto out;
			}
			if (port != NONE && port >= f->hosts[h].ports) {
				fabric_error_at(err, f, p->member_locs[m],
						"partition '%s': host '%s' has ports 0..%u, not %u",
						p->name, host, f->hosts[h].ports - 1, port);
				goto out;
			}
			p->member_host[m] = (uint32_t)h;
			p->member_port[m] = port;
			if (!owner[h]) {
				owner[h] = xcalloc(f->hosts[h].ports, sizeof(uint32_t));
				owner_m[h] = xcalloc(f->hosts[h].ports, sizeof(uint32_t));
			}
			uint32_t lo = port == NONE ? 0 : port;
			uint32_t hi = port == NONE ? f->hosts[h].ports : port + 1;

			for (uint32_t q = lo; q < hi; q++) {
				if (owner[h][q]) {
					const struct partition *o = &f->partitions[owner[h][q] - 1];

					fabric_error_at(
					    err, f, p->member_locs[m],
					    "partition '%s' claims host '%s' port %u, already "
					    "claimed "
					    "by partition '%s' (line %u)",
					    p->name, host, q, o->name,
					    o->member_locs[owner_m[h][q]].line);
					goto out;
				}
				owner[h][q] = i + 1;
				owner_m[h][q] = m;
			}
		}
	}
	for (uint32_t i = 0; i < f->npartitions; i++)
		if (check_partition_topology(f, &f->partitions[i], err) < 0)
			goto out;
	rc = 0;
out:
	for (uint32_t h = 0; h < f->nhosts; h++) {
		free(owner[h]);
		free(owner_m[h]);
	}
	free(owner);
	free(owner_m);
	return rc;
}

/* A topology that does not connect every host is a workload's (the
 * planner gives a phase's groups links of their own, and MoveToPhase
 * commits them) when every group of one of its kinds is connected within
 * it; else it is refused as any other that strands hosts. */
static int check_split(struct fabric *f, struct ofc_error *err)
{
	const struct workload *w = &f->workload;
	uint32_t *comp = xmalloc(((size_t)f->graph->n + 1) * sizeof(uint32_t));
	bool fits = false;

	topo_components(f->graph, comp);
	for (uint32_t k = 0; k < w->nkinds && !fits; k++) {
		const struct wl_kind *kind = &w->kinds[k];

		fits = true;
		for (size_t i = 0; i < (size_t)kind->ngroups * kind->size && fits; i++)
			fits = comp[kind->host[i]] == comp[kind->host[i - i % kind->size]];
	}
	free(comp);
	if (fits)
		return 0;
	return fabric_error_at(err, f, f->topology.spec_loc,
			       "topology '%s' is not strongly connected: some hosts could never "
			       "reach others, and no kind of the workload's groups has every "
			       "group connected in it",
			       f->graph->spec);
}

int fabric_validate(struct fabric *f, struct ofc_error *err)
{
	struct wiring_ctx w = {0};
	int rc = -1;

	/* (the picker is the caller's, for this validation alone) */
	const struct topo_picker *picker = f->picker;

	f->picker = NULL;
	if (f->validated)
		return 0;
	if (f->nhosts == 0)
		return fabric_error_at(err, f, f->hosts_loc, "the fabric has no hosts");
	if (index_hosts(f, err) < 0 || check_device_names(f, err) < 0 ||
	    check_switches(f, err) < 0 || check_rings(f, err) < 0 || check_partitions(f, err) < 0)
		return -1;
	if (check_wiring(f, &w, err) < 0 || check_topology(f, picker, err) < 0 ||
	    check_moves(f, err) < 0 || mark_failed_hosts(f, err) < 0 ||
	    degrade(f, false, err) < 0 || check_rates(f, err) < 0)
		goto out;
	if (!f->topology.present && f->npartitions && f->wiring_cfg.pattern != WIRING_NONE &&
	    fabric_partitions_circuits(f, err) < 0)
		goto out;
	if (fabric_server_check(f, err) < 0)
		goto out;
	if (!f->cost.alpha_set)
		f->cost.alpha = COST_ALPHA_DEFAULT;
	/* Hosts of different port rates: a schedule that loads its links
	 * evenly waits for the slowest, so that is the price (and said). */
	for (uint32_t h = 0; h < f->nhosts; h++) {
		const struct host *ho = &f->hosts[h];

		if (!ho->port_rates.n)
			widen(&f->cost, ho->port_rate);
		for (uint32_t j = 0; j < ho->port_rates.n; j++)
			widen(&f->cost, ho->port_rates.v[j]);
	}
	for (uint32_t i = 0; i < f->topology.nlink_rates; i++)
		widen(&f->cost, f->topology.link_rates[i].rate);
	double slowest = f->cost.rate_min;
	if (f->cost.rate_min == f->cost.rate_max)
		f->cost.rate_min = f->cost.rate_max = 0;
	if (!f->cost.bandwidth_set)
		f->cost.link_bandwidth = slowest > 0 ? slowest : f->hosts[0].port_rate;
	/* The workload last: its groups name hosts, its phases the kinds. */
	if (f->workload.present && workload_validate(f, &f->workload, err) < 0)
		goto out;
	if (f->topology.split && check_split(f, err) < 0)
		goto out;
	f->validated = true;
	rc = 0;
out:
	free(w.by_host_port);
	if (w.by_switch_port)
		for (uint32_t s = 0; s < f->nswitches; s++)
			free(w.by_switch_port[s]);
	free(w.by_switch_port);
	return rc;
}
