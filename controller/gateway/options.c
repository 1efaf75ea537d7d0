/* ofc-gateway's command line (options.h): one row an option, the generic
 * parsers of util/opts.c, and the help written from the rows. */
#include "controller/gateway/options.h"

#define G(field) offsetof(struct gw_opts, field)

#define DUR_100MS_1D "expected a duration from 100ms to 1 day"

const struct opt gw_option_table[] = {
    {"listen", opt_str, G(listen), "HOST:PORT", "a numeric address (port 0: any, see --port-file)",
     .flags = OPT_REQUIRED},
    {"port-file", opt_str, G(port_file), "FILE", "write the port bound once serving"},
    {"cert", opt_str, G(cert), "FILE", "the server's certificate chain (PEM)",
     .flags = OPT_REQUIRED},
    {"key", opt_str, G(key), "FILE", "the server's private key (PEM)", .flags = OPT_REQUIRED},
    {"ca", opt_str, G(ca), "FILE", "clients' certificates must chain to these (PEM)",
     .flags = OPT_REQUIRED},
    {"crl", opt_str, G(crl), "FILE",
     "the CA's revocation lists (PEM): each must be the CA's, its nextUpdate ahead; once that "
     "passes every client certificate is refused; SIGHUP reads it again"},
    {"policy", opt_str, G(policy), "FILE",
     "lines IDENTITY ROLE [PARTITION,...]: cn:NAME, dns:NAME, uri:NAME or email:NAME; admin, "
     "read-only or tenant; SIGHUP reads it again",
     .flags = OPT_REQUIRED},
    {"ofcd-socket", opt_str, G(ofcd_socket), "PATH",
     "the socket ofcd serves the gateway on (its gateway socket option)", .flags = OPT_REQUIRED},
    {"max-connections", opt_u32, G(max_connections), "N",
     "TLS connections at once (default 1024); at most half of them before their TLS handshake, "
     "the oldest of those closed to make room for a new one",
     1, 65536, "expected 1..65536"},
    {"max-connections-per-address", opt_u32, G(max_per_address), "N",
     "connections from one address at once, more are closed as accepted (default a quarter of "
     "--max-connections)",
     1, 65536, "expected 1..65536"},
    {"max-body", opt_size32, G(max_body), "SIZE", "largest request body (default 1MiB)", 1024,
     64u << 20, "expected a size from 1KiB to 64MiB"},
    {"read-timeout", opt_seconds, G(read_timeout), "DUR",
     "a connection's handshake and each request (line, headers, body) must arrive within this "
     "(default 10s)",
     0.1, 86400, DUR_100MS_1D},
    {"idle-timeout", opt_seconds, G(idle_timeout), "DUR",
     "no byte either way for this closes it (default 30s)", 0.1, 86400, DUR_100MS_1D},
    {"request-timeout", opt_seconds, G(request_timeout), "DUR",
     "how long ofcd may take to answer (default 10min)", 0.1, 86400, DUR_100MS_1D},
    {"upstream", opt_u32, G(upstream), "N",
     "connections to ofcd at once for requests (default 32; with --max-streams, at most what "
     "ofcd lets one user hold, its max-clients-per-uid)",
     1, 4096, "expected 1..4096"},
    {"max-streams", opt_u32, G(max_streams), "N",
     "watches and streamed schedules at once, apart from --upstream's connections (default "
     "24); more: 429",
     1, 4096, "expected 1..4096"},
    {"max-streams-per-principal", opt_u32, G(streams_per_principal), "N",
     "of them one certificate's principal holds (default 4)", 1, 4096, "expected 1..4096"},
    {"max-streams-per-address", opt_u32, G(streams_per_address), "N",
     "of them from one address (default 8)", 1, 4096, "expected 1..4096"},
    {"ui-dir", opt_str, G(ui_dir), "DIR",
     "serve the operator's page at /ui/ from DIR (its files: share/ofc/ui where ofc is "
     "installed)"},
    {"help", NULL, 0, NULL, "print this help", .flags = OPT_STOP, .letter = 'h'},
    {"version", NULL, 0, NULL, "print ofc-gateway's version", .flags = OPT_STOP},
    {NULL},
};

void gw_args_help(FILE *f)
{
	opt_usage(f, "ofc-gateway", gw_option_table);
	fputs("\nServes ofcd's control API as JSON over HTTPS with client certificates\n"
	      "(docs/control.md, \"The network API\"). It holds no device credentials and no\n"
	      "device connection: each request goes to ofcd's gateway socket with the\n"
	      "identity and role the policy gives the client's certificate.\n\n",
	      f);
	opt_help(f, gw_option_table);
}

int gw_args_parse(int argc, char **argv, struct gw_opts *o, const struct opt **stop,
		  struct ofc_error *err)
{
	int rc = opt_parse(gw_option_table, argc, argv, o, stop, err);

	/* The required rows, all strings, in the table's order. */
	for (const struct opt *r = gw_option_table; rc == 0 && r->name; r++)
		if ((r->flags & OPT_REQUIRED) && !*(const char **)((char *)o + r->off))
			rc = ofc_error_set(err, OFC_E_USAGE, "missing --%s %s", r->name, r->arg);
	return rc;
}
