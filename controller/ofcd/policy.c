/* What a config may make the daemon do (docs/ofcd.md, "Security"). ofcd
 * runs as root and anyone in the admin group can hand it a config
 * (ApplyConfig), so a config is checked before it is validated (validation
 * already looks at the files it names):
 *
 *   - credentials: every config ofcd runs, the operator's --config too,
 *     names its credentials files inside --credentials-dir (drivers/
 *     credentials.c checks the directory and reads through it);
 *   - device addresses: a config from the API reaches only addresses the
 *     operator allowed: an --allow-device entry (HOST:PORT or CIDR:PORT),
 *     an address the --config file gives a device, or a --device override.
 *     The --config file itself is trusted as it was before: the operator
 *     wrote it (and only root can make ofcd re-read it). */
#include "controller/ofcd/worker.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct allow_entry {
	char host[256]; /* HOST:PORT entries */
	bool cidr;
	int family;
	uint8_t addr[16];
	unsigned prefix;
	uint32_t port;
};

/* "host:port", "[v6]:port" -> host and port; -1 when it is neither. */
static int split(const char *s, char *host, size_t hn, uint32_t *port)
{
	const char *colon;
	size_t n;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return -1;
		n = (size_t)(close - s - 1);
		colon = close + 1;
		s++;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -1;
		n = (size_t)(colon - s);
	}
	if (n == 0 || n >= hn || parse_u32(colon + 1, port) < 0 || *port < 1 || *port > 65535)
		return -1;
	memcpy(host, s, n);
	host[n] = 0;
	return 0;
}

/* A numeric address: its family and bytes; 0 when host is a name. */
static int numeric(const char *host, uint8_t addr[16])
{
	if (inet_pton(AF_INET, host, addr) == 1)
		return AF_INET;
	if (inet_pton(AF_INET6, host, addr) == 1)
		return AF_INET6;
	return 0;
}

int ofcd_allow_parse(struct ofcd *d, struct ofc_error *err)
{
	d->allow = xcalloc(d->o.nallow_devices + 1, sizeof(*d->allow));
	for (uint32_t i = 0; i < d->o.nallow_devices; i++) {
		const char *s = d->o.allow_devices[i];
		struct allow_entry *a = &d->allow[d->nallow];
		char *slash;

		if (split(s, a->host, sizeof(a->host), &a->port) < 0)
			return ofc_error_set(err, OFC_E_USAGE,
					     "--allow-device '%s': expected HOST:PORT or CIDR:PORT "
					     "(port 1..65535; IPv6 in brackets)",
					     s);
		slash = strchr(a->host, '/');
		if (slash) {
			uint32_t bits;

			*slash = 0;
			a->cidr = true;
			a->family = numeric(a->host, a->addr);
			if (!a->family || parse_u32(slash + 1, &bits) < 0 ||
			    bits > (a->family == AF_INET ? 32u : 128u))
				return ofc_error_set(
				    err, OFC_E_USAGE,
				    "--allow-device '%s': expected an address/prefix "
				    "such as 10.0.0.0/8:3082",
				    s);
			a->prefix = bits;
		}
		d->nallow++;
	}
	return 0;
}

static bool in_prefix(const uint8_t *a, const uint8_t *net, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	if (memcmp(a, net, whole) != 0)
		return false;
	return !rest || ((a[whole] ^ net[whole]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

static bool same_host(const char *a, const char *b)
{
	uint8_t x[16], y[16];
	int fx = numeric(a, x), fy = numeric(b, y);

	if (fx || fy)
		return fx == fy && memcmp(x, y, fx == AF_INET ? 4 : 16) == 0;
	return strcasecmp(a, b) == 0;
}

static bool allowed(const struct ofcd *d, const char *address)
{
	char host[256], h2[256];
	uint8_t addr[16];
	uint32_t port, p2;
	int fam;

	if (split(address, host, sizeof(host), &port) < 0)
		return false;
	fam = numeric(host, addr);
	for (uint32_t i = 0; i < d->nallow; i++) {
		const struct allow_entry *a = &d->allow[i];

		if (a->port != port)
			continue;
		/* Names never match a CIDR: what a name resolves to may change
		 * between this check and the connect. */
		if (a->cidr ? fam == a->family && in_prefix(addr, a->addr, a->prefix)
			    : same_host(a->host, host))
			return true;
	}
	for (uint32_t i = 0; i < d->w->ntrusted; i++)
		if (split(d->w->trusted[i], h2, sizeof(h2), &p2) == 0 && p2 == port &&
		    same_host(h2, host))
			return true;
	return false;
}

static const char *override_of(const struct ofcd *d, const char *name)
{
	size_t n = strlen(name);

	for (uint32_t i = 0; i < d->o.noverrides; i++)
		if (strncmp(d->o.overrides[i], name, n) == 0 && d->o.overrides[i][n] == '=')
			return d->o.overrides[i] + n + 1;
	return NULL;
}

static int check_driver(const struct ofcd *d, const struct fabric *f, const char *name,
			const struct driver_cfg *dc, bool from_api, struct ofc_error *err)
{
	if (!dc->present)
		return 0;
	if (dc->credentials) {
		struct ofc_error e = {0};
		char *path = dc->credentials[0] == '/'
				 ? xstrdup(dc->credentials)
				 : xasprintf("%s/%s", f->dir, dc->credentials);
		int rc = credentials_check_path(path, d->cred_dir, &e);
		const char *slash = strrchr(path, '/');
		int dirlen = slash ? (int)(slash - path) : 0;

		/* The directory is the first thing a new install lacks: say
		 * which option names it, and where this config's file is. */
		if (rc < 0 && strcmp(e.file, d->cred_dir) == 0)
			rc = fabric_error_at(
			    err, f, dc->credentials_loc,
			    "credentials '%s' of %s: %s (ofcd reads credentials only "
			    "from --credentials-dir DIR; this one is in %.*s)",
			    dc->credentials, name, e.msg, dirlen, path);
		else if (rc < 0)
			rc = fabric_error_at(err, f, dc->credentials_loc,
					     "credentials '%s' of %s: %s", dc->credentials, name,
					     e.msg);
		free(path);
		if (rc < 0)
			return -1;
	}
	if (dc->known_hosts) {
		/* What ofc trusts a device by comes from the same place as
		 * what it logs in with (and a config from the API cannot make
		 * libssh read a file of its choosing). */
		struct ofc_error e = {0};
		char *path = dc->known_hosts[0] == '/'
				 ? xstrdup(dc->known_hosts)
				 : xasprintf("%s/%s", f->dir, dc->known_hosts);
		int rc = credentials_check_path(path, d->cred_dir, &e);

		free(path);
		if (rc < 0)
			return fabric_error_at(
			    err, f, dc->known_hosts_loc,
			    "known_hosts '%s' of %s: %s (ofcd reads it only from "
			    "--credentials-dir DIR)",
			    dc->known_hosts, name, e.msg);
	}
	if (dc->tls_ca) {
		/* as known_hosts: what ofc trusts a device by */
		struct ofc_error e = {0};
		char *path = dc->tls_ca[0] == '/' ? xstrdup(dc->tls_ca)
						  : xasprintf("%s/%s", f->dir, dc->tls_ca);
		int rc = credentials_check_path(path, d->cred_dir, &e);

		free(path);
		if (rc < 0)
			return fabric_error_at(err, f, dc->tls_ca_loc,
					       "tls_ca '%s' of %s: %s (ofcd reads it only from "
					       "--credentials-dir DIR)",
					       dc->tls_ca, name, e.msg);
	}
	if (from_api && dc->address && !override_of(d, name) && !allowed(d, dc->address))
		return fabric_error_at(
		    err, f, dc->address_loc,
		    "address '%s' of %s is not one ofcd may reach for a config sent to it: "
		    "allow it with --allow-device, or name it in ofcd's --config",
		    dc->address, name);
	return 0;
}

int ofcd_check_config(const struct ofcd *d, const struct fabric *f, bool from_api,
		      struct ofc_error *err)
{
	for (uint32_t i = 0; i < f->nswitches; i++)
		if (check_driver(d, f, f->switches[i].name, &f->switches[i].driver, from_api, err) <
		    0)
			return -1;
	for (uint32_t i = 0; i < f->nrings; i++)
		if (check_driver(d, f, f->rings[i].name, &f->rings[i].driver, from_api, err) < 0)
			return -1;
	return 0;
}

void ofcd_trust_config(struct ofcd *d, const struct fabric *f)
{
	for (uint32_t i = 0; i < d->w->ntrusted; i++)
		free(d->w->trusted[i]);
	free(d->w->trusted);
	d->w->trusted = xcalloc((size_t)f->nswitches + f->nrings + 1, sizeof(char *));
	d->w->ntrusted = 0;
	for (uint32_t i = 0; i < f->nswitches; i++)
		if (f->switches[i].driver.present && f->switches[i].driver.address)
			d->w->trusted[d->w->ntrusted++] = xstrdup(f->switches[i].driver.address);
	for (uint32_t i = 0; i < f->nrings; i++)
		if (f->rings[i].driver.present && f->rings[i].driver.address)
			d->w->trusted[d->w->ntrusted++] = xstrdup(f->rings[i].driver.address);
}
