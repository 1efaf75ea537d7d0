/* ofc-gateway: the network API in front of ofcd (gateway.h).
 * Options and logging; the server is the rest of controller/gateway/.
 * SIGTERM/SIGINT stop it, SIGHUP reloads the CA, the CRL and the policy
 * (a file refused there leaves the old ones in effect: gw_reload).
 * Exit status: 0 after a clean stop, 1 on a runtime failure, 2 on bad
 * options or a bad file. */
#include "controller/gateway/gateway.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static const char usage_line[] =
    "usage: ofc-gateway --listen HOST:PORT --cert FILE --key FILE --ca FILE [--crl FILE]\n"
    "                   --policy FILE --ofcd-socket PATH [--port-file FILE]\n"
    "                   [--max-connections N] [--max-connections-per-address N]\n"
    "                   [--max-body SIZE] [--read-timeout DUR] [--idle-timeout DUR]\n"
    "                   [--request-timeout DUR] [--upstream N] [--max-streams N]\n"
    "                   [--max-streams-per-principal N] [--max-streams-per-address N]\n"
    "                   [--ui-dir DIR]\n"
    "                   | --help | --version\n";

static const char help_text[] =
    "\nServes ofcd's control API as JSON over HTTPS with client certificates\n"
    "(docs/control.md, \"The network API\"). It holds no device credentials and no\n"
    "device connection: each request goes to ofcd's gateway socket with the\n"
    "identity and role the policy gives the client's certificate.\n\n"
    "  --listen HOST:PORT       a numeric address (port 0: any, see --port-file)\n"
    "  --port-file FILE         write the port bound once serving\n"
    "  --cert FILE, --key FILE  the server's certificate chain and key (PEM)\n"
    "  --ca FILE                clients' certificates must chain to these (PEM)\n"
    "  --crl FILE               the CA's revocation lists (PEM): each must be the\n"
    "                           CA's, its nextUpdate ahead; once that passes every\n"
    "                           client certificate is refused; SIGHUP reads it again\n"
    "  --policy FILE            lines IDENTITY ROLE [PARTITION,...]: cn:NAME,\n"
    "                           dns:NAME, uri:NAME or email:NAME; admin, read-only or\n"
    "                           tenant; SIGHUP reads it again\n"
    "  --ofcd-socket PATH       the socket ofcd serves the gateway on (its gateway\n"
    "                           socket option)\n"
    "  --max-connections N      TLS connections at once (default 1024); at most half\n"
    "                           of them before their TLS handshake, the oldest of\n"
    "                           those closed to make room for a new one\n"
    "  --max-connections-per-address N\n"
    "                           connections from one address at once, more are\n"
    "                           closed as accepted (default a quarter of\n"
    "                           --max-connections)\n"
    "  --max-body SIZE          largest request body (default 1MiB)\n"
    "  --read-timeout DUR       a connection's handshake and each request (line,\n"
    "                           headers, body) must arrive within this (default 10s)\n"
    "  --idle-timeout DUR       no byte either way for this closes it (default 30s)\n"
    "  --request-timeout DUR    how long ofcd may take to answer (default 10min)\n"
    "  --upstream N             connections to ofcd at once for requests (default 32;\n"
    "                           with --max-streams, at most what ofcd lets one user\n"
    "                           hold, its max-clients-per-uid)\n"
    "  --max-streams N          watches and streamed schedules at once, apart from\n"
    "                           --upstream's connections (default 24); more: 429\n"
    "  --max-streams-per-principal N\n"
    "                           of them one certificate's principal holds (default 4)\n"
    "  --max-streams-per-address N\n"
    "                           of them from one address (default 8)\n"
    "  --ui-dir DIR             serve the operator's page at /ui/ from DIR (its files:\n"
    "                           share/ofc/ui where ofc is installed)\n";

static void log_line(void *ctx, int level, const char *msg)
{
	static const char *const names[] = {"emerg",   "alert",	 "crit", "err",
					    "warning", "notice", "info", "debug"};
	struct timespec ts;
	struct tm tm;
	char when[32];

	(void)ctx;
	if (level > 6 && !getenv("OFC_GATEWAY_DEBUG"))
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(stderr, "%s.%03ldZ ofc-gateway %s: %s\n", when, ts.tv_nsec / 1000000,
		level >= 0 && level <= 7 ? names[level] : "log", msg);
}

static int usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "ofc-gateway: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'ofc-gateway --help'.\n");
	return 2;
}

static int duration_opt(const char *name, const char *arg, double *out)
{
	const char *why;

	if (parse_duration(arg, out, &why) < 0 || *out < 0.1 || *out > 86400) {
		fprintf(stderr, "ofc-gateway: %s '%s': expected a duration from 100ms to 1 day\n",
			name, arg);
		return 2;
	}
	return -1;
}

static int parse_args(int argc, char **argv, struct gw_opts *o)
{
	static const struct option opts[] = {
	    {"listen", required_argument, NULL, 'l'},
	    {"port-file", required_argument, NULL, 'p'},
	    {"cert", required_argument, NULL, 'c'},
	    {"key", required_argument, NULL, 'k'},
	    {"ca", required_argument, NULL, 'a'},
	    {"crl", required_argument, NULL, 'r'},
	    {"policy", required_argument, NULL, 'P'},
	    {"ofcd-socket", required_argument, NULL, 's'},
	    {"max-connections", required_argument, NULL, 'C'},
	    {"max-connections-per-address", required_argument, NULL, 'A'},
	    {"max-body", required_argument, NULL, 'B'},
	    {"read-timeout", required_argument, NULL, 'R'},
	    {"idle-timeout", required_argument, NULL, 'I'},
	    {"request-timeout", required_argument, NULL, 'T'},
	    {"upstream", required_argument, NULL, 'U'},
	    {"max-streams", required_argument, NULL, 'S'},
	    {"max-streams-per-principal", required_argument, NULL, 'Q'},
	    {"max-streams-per-address", required_argument, NULL, 'D'},
	    {"ui-dir", required_argument, NULL, 'u'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {0},
	};
	const char *why;
	uint64_t v;
	int c, rc;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			o->listen = optarg;
			break;
		case 'p':
			o->port_file = optarg;
			break;
		case 'c':
			o->cert = optarg;
			break;
		case 'k':
			o->key = optarg;
			break;
		case 'a':
			o->ca = optarg;
			break;
		case 'r':
			o->crl = optarg;
			break;
		case 'P':
			o->policy = optarg;
			break;
		case 's':
			o->ofcd_socket = optarg;
			break;
		case 'C':
			if (parse_u64(optarg, &v) < 0 || v < 1 || v > 65536)
				return usage("--max-connections '%s': expected 1..65536", optarg);
			o->max_connections = (uint32_t)v;
			break;
		case 'A':
			if (parse_u64(optarg, &v) < 0 || v < 1 || v > 65536)
				return usage(
				    "--max-connections-per-address '%s': expected 1..65536",
				    optarg);
			o->max_per_address = (uint32_t)v;
			break;
		case 'B':
			if (parse_size(optarg, &v, &why) < 0 || v < 1024 || v > (64u << 20))
				return usage("--max-body '%s': expected a size from 1KiB to 64MiB",
					     optarg);
			o->max_body = (uint32_t)v;
			break;
		case 'R':
			if ((rc = duration_opt("--read-timeout", optarg, &o->read_timeout)) >= 0)
				return rc;
			break;
		case 'I':
			if ((rc = duration_opt("--idle-timeout", optarg, &o->idle_timeout)) >= 0)
				return rc;
			break;
		case 'T':
			if ((rc = duration_opt("--request-timeout", optarg, &o->request_timeout)) >=
			    0)
				return rc;
			break;
		case 'U':
			if (parse_u64(optarg, &v) < 0 || v < 1 || v > 4096)
				return usage("--upstream '%s': expected 1..4096", optarg);
			o->upstream = (uint32_t)v;
			break;
		case 'S':
			if (parse_u64(optarg, &v) < 0 || v < 1 || v > 4096)
				return usage("--max-streams '%s': expected 1..4096", optarg);
			o->max_streams = (uint32_t)v;
			break;
		case 'Q':
			if (parse_u64(optarg, &v) < 0 || v < 1 || v > 4096)
				return usage("--max-streams-per-principal '%s': expected 1..4096",
					     optarg);
			o->streams_per_principal = (uint32_t)v;
			break;
		case 'D':
			if (parse_u64(optarg, &v) < 0 || v < 1 || v > 4096)
				return usage("--max-streams-per-address '%s': expected 1..4096",
					     optarg);
			o->streams_per_address = (uint32_t)v;
			break;
		case 'u':
			o->ui_dir = optarg;
			break;
		case 'h':
			printf("%s%s", usage_line, help_text);
			return 0;
		case 'V':
			printf("ofc-gateway %s\n", OFC_VERSION);
			return 0;
		default:
			return usage("unknown option or missing value: %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage("unexpected argument '%s'", argv[optind]);
	const char *missing = !o->listen	? "--listen HOST:PORT"
			      : !o->cert	? "--cert FILE"
			      : !o->key		? "--key FILE"
			      : !o->ca		? "--ca FILE"
			      : !o->policy	? "--policy FILE"
			      : !o->ofcd_socket ? "--ofcd-socket PATH"
						: NULL;
	if (missing)
		return usage("missing %s", missing);
	return -1;
}

int main(int argc, char **argv)
{
	struct gw_opts o = {.log = log_line};
	struct ofc_error err = {0};
	struct gateway *g;
	sigset_t set;
	char buf[1024];
	int rc, sig;

	if ((rc = parse_args(argc, argv, &o)) >= 0)
		return rc;
	/* A descriptor a connection, and a few for ofcd and the files. */
	struct rlimit nf;
	if (getrlimit(RLIMIT_NOFILE, &nf) == 0 && nf.rlim_cur < nf.rlim_max) {
		nf.rlim_cur = nf.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nf);
	}
	/* Signals are taken by this thread alone (sigwait): the server's
	 * threads inherit the mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (gw_open(&o, &g, &err) < 0) {
		ofc_error_str(&err, buf, sizeof(buf));
		fprintf(stderr, "ofc-gateway: %s\n", buf);
		return ofc_error_exit_code(&err) ? ofc_error_exit_code(&err) : 1;
	}
	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			gw_reload(g);
			continue;
		}
		break;
	}
	gw_stop(g);
	gw_close(g);
	return 0;
}
