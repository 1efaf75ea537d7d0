/* ofc-gateway: the network API in front of ofcd (gateway.h).
 * Options and logging; the server is the rest of controller/gateway/.
 * SIGTERM/SIGINT stop it, SIGHUP reloads the CA, the CRL and the policy
 * (a file refused there leaves the old ones in effect: gw_reload).
 * Exit status: 0 after a clean stop, 1 on a runtime failure, 2 on bad
 * options or a bad file. */
#include "controller/gateway/options.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

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

int main(int argc, char **argv)
{
	struct gw_opts o = {.log = log_line};
	struct ofc_error err = {0};
	struct gateway *g;
	sigset_t set;
	char buf[1024];
	int rc, sig;

	const struct opt *stop = NULL;

	if ((rc = gw_args_parse(argc, argv, &o, &stop, &err)) < 0) {
		fprintf(stderr, "ofc-gateway: %s\nTry 'ofc-gateway --help'.\n", err.msg);
		return ofc_error_exit_code(&err);
	}
	if (rc > 0) {
		if (strcmp(stop->name, "help") == 0)
			gw_args_help(stdout);
		else
			printf("ofc-gateway %s\n", OFC_VERSION);
		return 0;
	}
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
