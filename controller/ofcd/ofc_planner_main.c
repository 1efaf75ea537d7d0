/* ofc-planner: ofcd's planner process (planner_serve.c). ofcd starts it
 * with the socket to it as fd 3; it is not a command for people. Exit
 * status: 0 when ofcd closed the socket, 1 when it could not set itself
 * up, 2 on bad options. */
#include "controller/ofcd/internal.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage_line[] =
    "usage: ofc-planner --max-memory BYTES [--for WHAT] [--topology-dir DIR] [--cut-fd FD]\n"
    "  (run by ofcd, socket on fd 3; WHAT, what it computes, is shown in ps alone)\n";

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"max-memory", required_argument, NULL, 'm'},
					     {"topology-dir", required_argument, NULL, 't'},
					     {"for", required_argument, NULL, 'f'},
					     {"cut-fd", required_argument, NULL, 'c'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct planner_serve_opts o = {.fd = 3};
	struct ofc_error err = {0};
	struct stat st;
	sigset_t none;
	uint64_t cut_fd = 0;
	int c;

	mem_tune_for_engines();
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'm' && parse_u64(optarg, &o.max_memory) == 0 && o.max_memory > 0)
			continue;
		if (c == 'f')
			continue;
		if (c == 't') {
			o.topology_dir = optarg;
			continue;
		}
		if (c == 'c' && parse_u64(optarg, &cut_fd) == 0 && cut_fd > 2 && cut_fd < 1024)
			continue;
		fputs(usage_line, c == 'h' ? stdout : stderr);
		return c == 'h' ? 0 : 2;
	}
	if (optind != argc || !o.max_memory) {
		fputs(usage_line, stderr);
		return 2;
	}
	if (fstat(o.fd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
		fprintf(stderr, "ofc-planner: fd 3 is not a socket: ofcd runs this program\n");
		return 2;
	}
	/* the page whose first word ofcd cuts a renumbering's budget with */
	if (cut_fd) {
		void *page =
		    fstat((int)cut_fd, &st) == 0 && S_ISREG(st.st_mode) &&
			    st.st_size >= (off_t)sizeof(int32_t)
			? mmap(NULL, sizeof(int32_t), PROT_READ, MAP_SHARED, (int)cut_fd, 0)
			: MAP_FAILED;

		if (page == MAP_FAILED) {
			fprintf(
			    stderr,
			    "ofc-planner: fd %llu is not the cut's page: ofcd runs this program\n",
			    (unsigned long long)cut_fd);
			return 2;
		}
		close((int)cut_fd);
		o.cut_us = page;
	}
	/* (the limits' signals end it; a closed socket is an error, not one) */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGXCPU, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	if (planner_serve(&o, &err) < 0) {
		fprintf(stderr, "ofc-planner: %s\n", err.msg);
		return 1;
	}
	return 0;
}
