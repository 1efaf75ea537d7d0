/* The MPI baseline: MPICH's own collectives on the testbed's hosts, one
 * rank per host namespace (exec/mpi/ofc_mpi_rank.c enters it), started by
 * MPICH's mpiexec (Hydra, fork launcher) in a process group of its own so
 * the whole job can be stopped at the deadline. UCX is told to use TCP;
 * MPICH is told no rank is local (MPIR_CVAR_NOLOCAL), since every rank runs
 * on this machine and would otherwise use shared memory between the
 * namespaces.
 *
 * The result is the rank's one JSON line. MPICH 4.0 over UCX/TCP now and
 * then hangs in MPI_Finalize (a rank closing its endpoints waits on ranks
 * already blocked in the PMI barrier), after the result is printed: the
 * job then gets EXEC_MPI_GRACE seconds to exit before it is stopped, and
 * the result says so. */
#include "exec/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXEC_MPI_GRACE 3.0
#define MPI_LINE_MAX   512

/* ofc-mpi-rank: $OFC_MPI_RANK, else beside the running executable. */
static char *find_rank_binary(void)
{
	return exe_sibling("OFC_MPI_RANK", "ofc-mpi-rank");
}

static bool on_path(const char *prog)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL;
	bool found = false;

	if (!path)
		path = "/usr/bin:/bin";
	copy = xstrdup(path);
	for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/%s", dir, prog);

		found = access(p, X_OK) == 0;
		free(p);
	}
	free(copy);
	return found;
}

/* {"seconds": S, "data_ok": B, "checked_elements": E, "bad_elements": X},
 * exactly as the rank prints it. */
static int parse_line(const char *line, struct exec_mpi_result *r)
{
	char ok[8];
	unsigned long long e, b;
	int used = 0;

	if (sscanf(line,
		   "{\"seconds\": %lf, \"data_ok\": %7[a-z], \"checked_elements\": %llu, "
		   "\"bad_elements\": %llu}%n",
		   &r->seconds, ok, &e, &b, &used) != 4 ||
	    used == 0 || !(r->seconds > 0) || (strcmp(ok, "true") && strcmp(ok, "false")))
		return -1;
	r->data_ok = strcmp(ok, "true") == 0;
	r->checked_elements = e;
	r->bad_elements = b;
	return 0;
}

/* The last non-empty line of a file, for an error message. */
static void last_line(const char *path, char *out, size_t n)
{
	char buf[4096];
	FILE *f = fopen(path, "r");
	size_t len;
	char *end, *start;

	out[0] = 0;
	if (!f)
		return;
	if (fseek(f, 0, SEEK_END) == 0 && ftell(f) > (long)sizeof(buf) - 1)
		fseek(f, -(long)sizeof(buf) + 1, SEEK_END);
	else
		rewind(f);
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = 0;
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '='))
		buf[--len] = 0;
	end = buf + len;
	start = end;
	while (start > buf && start[-1] != '\n')
		start--;
	len = strlen(start);
	if (len >= n)
		len = n - 1;
	memcpy(out, start, len);
	out[len] = 0;
}

static void stop_group(pid_t pid)
{
	double until = now_seconds() + 1.0;

	kill(-pid, SIGTERM);
	while (now_seconds() < until) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return;
		usleep(20000);
	}
	kill(-pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The ranks' hosts file: a host's namespace and its device a line. */
static int write_rank_hosts(const char *path, const struct exec_net *net,
			    const struct exec_mpi_opts *o, struct ofc_error *err)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return ofc_error_set(err, OFC_E_RUNTIME, "%s: %s", path, strerror(errno));
	for (uint32_t h = 0; h < net->nhosts; h++)
		fprintf(f, "%s %s\n", net->netns[h], o->device);
	if (fclose(f) != 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "%s: %s", path, strerror(errno));
	return 0;
}

/* The child: its own process group, the result line into out, its stderr
 * into errf, mpiexec running a rank a host with fork. */
static void exec_mpiexec(int out, const char *errf, const char *n, const char *rank,
			 const char *hosts, const char *collective, const char *size,
			 const char *iters)
{
	int e = open(errf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);

	setpgid(0, 0);
	if (e < 0 || nul < 0 || dup2(out, 1) < 0 || dup2(e, 2) < 0 || dup2(nul, 0) < 0)
		_exit(127);
	execlp("mpiexec", "mpiexec", "-launcher", "fork", "-n", n, "-genv", "UCX_TLS", "tcp",
	       "-genv", "MPIR_CVAR_NOLOCAL", "1", rank, hosts, collective, size, iters,
	       (char *)NULL);
	_exit(127);
}

/* No result line: out of time, or mpiexec gone; with its stderr's last. */
static void no_result(const struct exec_mpi_opts *o, const char *errf, bool exited, int status,
		      struct ofc_error *err)
{
	char tail[240];

	last_line(errf, tail, sizeof(tail));
	if (!exited)
		ofc_error_set(err, OFC_E_RUNTIME, "MPI %s: no result within %.0f s%s%s",
			      o->collective, o->timeout, tail[0] ? ": " : "", tail);
	else
		ofc_error_set(err, OFC_E_RUNTIME,
			      "MPI %s: mpiexec exited (status %d) without a result%s%s",
			      o->collective, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			      tail[0] ? ": " : "", tail);
}

int exec_mpi_run(const struct exec_net *net, const struct exec_mpi_opts *o,
		 struct exec_mpi_result *r, struct ofc_error *err)
{
	char dir[] = "/tmp/ofc-mpi-XXXXXX";
	char *rank = NULL, *hosts = NULL, *errf = NULL, size[32], n[16], iters[16];
	char line[MPI_LINE_MAX];
	size_t len = 0;
	int pfd[2] = {-1, -1}, rc = -1, status = 0;
	double deadline = now_seconds() + o->timeout, grace = 0;
	bool have = false, exited = false;
	pid_t pid;

	*r = (struct exec_mpi_result){0};
	if (!net->netns)
		return ofc_error_set(err, OFC_E_INPUT, "the MPI baseline needs host namespaces");
	if (!on_path("mpiexec"))
		return ofc_error_set(
		    err, OFC_E_RUNTIME,
		    "the MPI baseline needs MPICH's mpiexec (apt-get install mpich)");
	rank = find_rank_binary();
	if (!rank || access(rank, X_OK) != 0) {
		ofc_error_set(err, OFC_E_RUNTIME,
			      "the MPI baseline needs ofc-mpi-rank (built by make with mpicc) at "
			      "%s, or OFC_MPI_RANK",
			      rank ? rank : "the directory of ofc");
		free(rank);
		return -1;
	}
	if (!mkdtemp(dir)) {
		free(rank);
		return ofc_error_set(err, OFC_E_RUNTIME, "mkdtemp: %s", strerror(errno));
	}
	hosts = xasprintf("%s/hosts", dir);
	errf = xasprintf("%s/stderr", dir);
	if (write_rank_hosts(hosts, net, o, err) < 0)
		goto out;
	snprintf(size, sizeof(size), "%llu", (unsigned long long)o->size);
	snprintf(n, sizeof(n), "%u", net->nhosts);
	snprintf(iters, sizeof(iters), "%u", o->iterations ? o->iterations : 3);
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		ofc_error_set(err, OFC_E_RUNTIME, "pipe: %s", strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		ofc_error_set(err, OFC_E_RUNTIME, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		exec_mpiexec(pfd[1], errf, n, rank, hosts, o->collective, size, iters);
	setpgid(pid, pid);
	close(pfd[1]);
	pfd[1] = -1;
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	/* Read the result line; then give the job its grace to exit. */
	for (;;) {
		double now = now_seconds(), until = have ? grace : deadline;
		struct pollfd p = {.fd = pfd[0], .events = POLLIN};
		int ms = (int)((until - now) * 1000) + 1;
		ssize_t got;

		if (waitpid(pid, &status, WNOHANG) == pid) {
			exited = true;
			break;
		}
		if (now >= until)
			break;
		if (pfd[0] >= 0 && poll(&p, 1, ms > 100 ? 100 : ms) > 0) {
			got = read(pfd[0], line + len, sizeof(line) - 1 - len);
			if (got > 0) {
				len += (size_t)got;
				line[len] = 0;
				if (!have && strchr(line, '\n')) {
					have = true;
					grace = now_seconds() + EXEC_MPI_GRACE;
				}
				if (len == sizeof(line) - 1 && !have) {
					stop_group(pid);
					ofc_error_set(err, OFC_E_RUNTIME,
						      "the MPI ranks printed more than %d bytes "
						      "without a result",
						      MPI_LINE_MAX);
					goto out;
				}
			} else if (got == 0) {
				close(pfd[0]);
				pfd[0] = -1;
			}
		} else if (pfd[0] < 0) {
			usleep(20000);
		}
	}
	if (!exited) {
		stop_group(pid);
		r->finalize_hung = have;
	}
	if (!have) {
		no_result(o, errf, exited, status, err);
		goto out;
	}
	if (parse_line(line, r) < 0) {
		*strchrnul(line, '\n') = 0;
		ofc_error_set(err, OFC_E_RUNTIME, "MPI %s: unexpected result line '%.200s'",
			      o->collective, line);
		goto out;
	}
	rc = 0;
out:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	unlink(hosts);
	unlink(errf);
	rmdir(dir);
	free(hosts);
	free(errf);
	free(rank);
	return rc;
}

/* ---- any MPI program, one rank per host (exec_mpirun) --------------------- */

/* ofc-netns-exec: $OFC_NETNS_EXEC, else beside the running executable. */
static char *find_launcher(void)
{
	return exe_sibling("OFC_NETNS_EXEC", "ofc-netns-exec");
}

/* The launcher's command line: MPICH's Hydra (fork launcher; UCX over
 * TCP, no rank taken as local) or Open MPI's (ob1 over the TCP BTL on the
 * host's device, never shared memory: every rank is on this machine, and
 * the bytes must take the circuits). The library's variables go to every
 * rank; ofc-netns-exec sets LD_PRELOAD after entering the host. */
static char **mpirun_argv(const struct exec_mpirun_opts *o, uint32_t n, const char *launcher,
			  const char *hosts, char **keep, size_t *nkeep)
{
	size_t nprog = 0, k = 0;
	char **v;

	while (o->argv[nprog])
		nprog++;
	v = xcalloc(nprog + 40, sizeof(char *));
#define ARG(x)	(v[k++] = (char *)(x))
#define KEEP(x) (keep[(*nkeep)++] = (x))
	if (o->openmpi) {
		ARG("mpiexec.openmpi"), ARG("--allow-run-as-root"), ARG("--oversubscribe");
		ARG("-n"), ARG(KEEP(xasprintf("%u", n)));
		ARG("--mca"), ARG("pml"), ARG("ob1"), ARG("--mca"), ARG("btl"), ARG("tcp,self");
		ARG("--mca"), ARG("btl_tcp_if_include"), ARG(o->device);
		if (o->preload) {
			ARG("-x"), ARG(KEEP(xasprintf("OFC_MPI_PRELOAD=%s", o->preload)));
			ARG("-x"), ARG(KEEP(xasprintf("OFC_SCHEDULE=%s", o->schedules)));
			ARG("-x"), ARG(KEEP(xasprintf("OFC_MPI_REPORT=%s", o->report)));
			/* (Open MPI passes only what -x names) */
			static const char *const pass[] = {"OFC_MPI_PIECE", "OFC_SOCKET",
							   "OFC_SCHEDULE_WATCH",
							   "OFC_MPI_OFCD_POLL"};
			for (size_t i = 0; i < sizeof(pass) / sizeof(pass[0]); i++)
				if (getenv(pass[i]))
					ARG("-x"), ARG(pass[i]);
		}
		ARG("-x"), ARG("PATH");
	} else {
		ARG("mpiexec"), ARG("-launcher"), ARG("fork");
		ARG("-n"), ARG(KEEP(xasprintf("%u", n)));
		ARG("-genv"), ARG("UCX_TLS"), ARG("tcp"), ARG("-genv"), ARG("MPIR_CVAR_NOLOCAL"),
		    ARG("1");
		if (o->preload) {
			ARG("-genv"), ARG("OFC_MPI_PRELOAD"), ARG(o->preload);
			ARG("-genv"), ARG("OFC_SCHEDULE"), ARG(o->schedules);
			ARG("-genv"), ARG("OFC_MPI_REPORT"), ARG(o->report);
		}
	}
	ARG(launcher), ARG(hosts);
	for (size_t i = 0; i < nprog; i++)
		ARG(o->argv[i]);
#undef ARG
#undef KEEP
	return v;
}

static int write_hosts(const struct exec_net *net, const struct exec_mpirun_opts *o,
		       const char *path, struct ofc_error *err)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return ofc_error_set(err, OFC_E_RUNTIME, "%s: %s", path, strerror(errno));
	for (uint32_t h = 0; h < net->nhosts; h++)
		fprintf(f, "%s %s %s\n", net->netns[h], o->device, o->hosts[h]);
	if (fclose(f) != 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "%s: %s", path, strerror(errno));
	return 0;
}

/* The job, in a process group of its own; its status, or the deadline.
 * Once done_file is there (every rank reached MPI_Finalize), the job has
 * EXEC_MPI_GRACE seconds to exit, as the baseline's (MPICH 4.0 over UCX
 * now and then hangs in MPI_Finalize). */
static int mpirun_wait(pid_t pid, double deadline, const char *done_file,
		       struct exec_mpirun_result *r)
{
	double grace = 0;
	int status = 0;

	for (;;) {
		double now = now_seconds();

		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		if (!grace && done_file && access(done_file, F_OK) == 0)
			grace = now + EXEC_MPI_GRACE;
		if (now >= deadline || (grace && now >= grace)) {
			stop_group(pid);
			r->finalize_hung = grace && now >= grace;
			r->timed_out = !r->finalize_hung;
			r->exit_code = -1;
			return 0;
		}
		usleep(20000);
	}
	r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return 0;
}

int exec_mpirun(const struct exec_net *net, const struct exec_mpirun_opts *o,
		struct exec_mpirun_result *r, struct ofc_error *err)
{
	char *launcher = find_launcher(), *hosts = xasprintf("%s/hosts", o->dir), *keep[8];
	size_t nkeep = 0;
	char **argv = NULL;
	int rc = -1;
	pid_t pid;

	*r = (struct exec_mpirun_result){0};
	if (!net->netns) {
		ofc_error_set(err, OFC_E_INPUT, "mpirun needs host namespaces");
		goto out;
	}
	if (!on_path(o->openmpi ? "mpiexec.openmpi" : "mpiexec")) {
		ofc_error_set(err, OFC_E_RUNTIME, "%s is not installed (apt-get install %s)",
			      o->openmpi ? "Open MPI's mpiexec.openmpi" : "MPICH's mpiexec",
			      o->openmpi ? "openmpi-bin" : "mpich");
		goto out;
	}
	if (!launcher || access(launcher, X_OK) != 0) {
		ofc_error_set(err, OFC_E_RUNTIME,
			      "mpirun needs ofc-netns-exec (built by make mpi) at %s, or "
			      "OFC_NETNS_EXEC",
			      launcher ? launcher : "the directory of ofc");
		goto out;
	}
	if (write_hosts(net, o, hosts, err) < 0)
		goto out;
	argv = mpirun_argv(o, net->nhosts, launcher, hosts, keep, &nkeep);
	pid = fork();
	if (pid < 0) {
		ofc_error_set(err, OFC_E_RUNTIME, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
		int out = o->output
			      ? open(o->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)
			      : -1;

		setpgid(0, 0);
		if (nul < 0 || dup2(nul, 0) < 0 ||
		    (o->output && (out < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)))
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	setpgid(pid, pid);
	rc = mpirun_wait(pid, now_seconds() + o->timeout, o->report, r);
out:
	for (size_t i = 0; i < nkeep; i++)
		free(keep[i]);
	free(argv);
	free(launcher);
	free(hosts);
	return rc;
}
