/* The store (controller/reconfig/store.h): the files backend keeps what it
 * is given and refuses what is no file; the etcd backend, against a real
 * one-member etcd 3.4 started here on loopback, elects one leader of two
 * replicas, lets only the leader write, fences a replica whose leadership
 * ended (its writes refused, store_fence negative), hands the leadership
 * over when the leader resigns, and delivers the leader's writes to the
 * follower's reads through its watch; each replica registers under its
 * lease and lists the others, and a name that runs is refused. Against an
 * etcd with a small --max-request-bytes, values several times one request
 * go as parts that a new leader and a follower read back, a damaged or
 * missing part is refused by its key, and what cannot fit says so. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/reconfig/internal.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

/* ---- files ---------------------------------------------------------------------- */

static void test_files(void **state)
{
	char dir[] = "/tmp/ofc-store.XXXXXX", *path, *data;
	struct ofc_error err = {0};
	struct store *s;
	size_t len;
	bool missing;

	(void)state;
	assert_non_null(mkdtemp(dir));
	s = store_open_files(dir);
	assert_int_equal(store_get(s, "f", STORE_JOURNAL, 100, &data, &len, &missing, &err), 0);
	assert_true(missing);
	assert_null(data);
	/* a batch: in order, each whole */
	struct store_write w[2] = {{STORE_RECORD, "rec", 3}, {STORE_FAILED, "h0-h1\n", 6}};
	assert_int_equal(store_write(s, "f", w, 2, &err), 0);
	assert_int_equal(store_get(s, "f", STORE_RECORD, 100, &data, &len, &missing, &err), 0);
	assert_false(missing);
	assert_int_equal(len, 3);
	assert_string_equal(data, "rec");
	free(data);
	/* over the limit: an error naming the file */
	assert_int_equal(store_get(s, "f", STORE_FAILED, 2, &data, &len, &missing, &err), -1);
	path = store_where(s, "f", STORE_FAILED);
	assert_string_equal(err.file, path);
	free(path);
	/* a removal */
	struct store_write rm = {STORE_RECORD, NULL, 0};
	assert_int_equal(store_write(s, "f", &rm, 1, &err), 0);
	assert_int_equal(store_get(s, "f", STORE_RECORD, 100, &data, &len, &missing, &err), 0);
	assert_true(missing);
	/* a FIFO in the journal's place: named, reason GARBAGE, left alone */
	path = store_where(s, "f", STORE_JOURNAL);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(store_get(s, "f", STORE_JOURNAL, 100, &data, &len, &missing, &err), -1);
	assert_int_equal(err.reason, OFC_R_GARBAGE);
	assert_non_null(strstr(err.msg, "a FIFO"));
	char *mv = store_aside(s, "f", STORE_JOURNAL, ".corrupt");
	char *want = xasprintf("mv '%s' '%s.corrupt'", path, path);
	assert_string_equal(mv, want);
	free(mv);
	free(want);
	unlink(path);
	free(path);
	/* the held partitions: FABRIC.held, kept and set aside like the rest */
	struct store_write hw = {STORE_HELD, "\x12\x01x", 3};
	assert_int_equal(store_write(s, "f", &hw, 1, &err), 0);
	assert_int_equal(store_get(s, "f", STORE_HELD, 100, &data, &len, &missing, &err), 0);
	assert_false(missing);
	assert_int_equal(len, 3);
	assert_memory_equal(data, "\x12\x01x", 3);
	free(data);
	path = store_where(s, "f", STORE_HELD);
	want = xasprintf("%s/f.held", dir);
	assert_string_equal(path, want);
	free(want);
	assert_int_equal(access(path, F_OK), 0);
	free(path);
	/* files always lead, unfenced */
	struct store_cluster cl;
	store_cluster(s, &cl);
	assert_false(cl.clustered);
	assert_true(store_fence(s) == 0);
	assert_int_equal(store_epoch(s), 0);
	store_close(s);
	char *cmd = xasprintf("rm -rf '%s'", dir);
	(void)!system(cmd);
	free(cmd);
}

/* ---- etcd ------------------------------------------------------------------------- */

struct etcd_world {
	char dir[64];
	pid_t pid;
	char endpoints[64];
	/* the client's certificate (etcd's --client-cert-auth asks for it) */
	char ca[96], cert[96], key[96];
	struct etcd_tls tls;
};

/* A CA, etcd's certificate (IP:127.0.0.1) and a client's, and another
 * CA's client certificate (intruder.*), made in dir by the openssl CLI.
 * etcd's certificate is a client's too: its JSON gateway dials its own
 * gRPC port with it. */
static void make_pki(const char *dir)
{
	static const char script[] =
	    "set -e\n"
	    "nk() { openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \"$@\"; }\n"
	    "for ca in ca other; do\n"
	    "  nk -x509 -days 2 -keyout $ca.key -out $ca.pem -subj /CN=ofc-unit-$ca \\\n"
	    "    -addext basicConstraints=critical,CA:TRUE \\\n"
	    "    -addext keyUsage=critical,keyCertSign,cRLSign\n"
	    "done\n"
	    "printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth,clientAuth\\n' "
	    ">s.ext\n"
	    "printf 'extendedKeyUsage=clientAuth\\n' >c.ext\n"
	    "for n in server:ca:s client:ca:c intruder:other:c; do\n"
	    "  IFS=: read -r w ca e <<EOF\n$n\nEOF\n"
	    "  nk -keyout $w.key -out $w.csr -subj /CN=$w\n"
	    "  openssl x509 -req -in $w.csr -CA $ca.pem -CAkey $ca.key -CAcreateserial \\\n"
	    "    -days 2 -extfile $e.ext -out $w.pem\n"
	    "done\n"
	    "chmod 600 ./*.key\n";
	char *path = xasprintf("%s/pki.sh", dir);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(script, f);
	fclose(f);
	char *cmd = xasprintf("cd '%s' && sh pki.sh >openssl.log 2>&1", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(path);
}

/* A free loopback port (bound, then let go: etcd takes it at once). */
/* Two free ports for etcd, from below the ephemeral range: a port bind(0)
 * handed out may go to an outgoing connection before etcd binds it. */
static void free_ports(int *a, int *b)
{
	FILE *p = popen("scripts/free-ports 2", "r");

	assert_non_null(p);
	assert_int_equal(fscanf(p, "%d %d", a, b), 2);
	assert_int_equal(pclose(p), 0);
}

/* etcd on loopback; max_request its --max-request-bytes (NULL: its own). */
static int etcd_up(void **state, const char *max_request)
{
	struct etcd_world *w = xcalloc(1, sizeof(*w));
	int cport, pport;
	char curl[64], purl[64], cluster[80], data[96], log[96];

	free_ports(&cport, &pport);
	snprintf(w->dir, sizeof(w->dir), "/tmp/ofc-etcd.XXXXXX");
	assert_non_null(mkdtemp(w->dir));
	make_pki(w->dir);
	snprintf(w->ca, sizeof(w->ca), "%s/ca.pem", w->dir);
	snprintf(w->cert, sizeof(w->cert), "%s/client.pem", w->dir);
	snprintf(w->key, sizeof(w->key), "%s/client.key", w->dir);
	w->tls = (struct etcd_tls){w->ca, w->cert, w->key};
	char *scert = xasprintf("%s/server.pem", w->dir),
	     *skey = xasprintf("%s/server.key", w->dir);
	snprintf(curl, sizeof(curl), "https://127.0.0.1:%d", cport);
	snprintf(purl, sizeof(purl), "http://127.0.0.1:%d", pport);
	snprintf(cluster, sizeof(cluster), "s1=%s", purl);
	snprintf(data, sizeof(data), "%s/data", w->dir);
	snprintf(log, sizeof(log), "%s/etcd.log", w->dir);
	snprintf(w->endpoints, sizeof(w->endpoints), "etcds://127.0.0.1:%d", cport);
	w->pid = fork();
	assert_true(w->pid >= 0);
	if (w->pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fd, 1);
		dup2(fd, 2);
		char *argv[] = {"etcd",
				"--name",
				"s1",
				"--data-dir",
				data,
				"--listen-client-urls",
				curl,
				"--advertise-client-urls",
				curl,
				"--listen-peer-urls",
				purl,
				"--initial-advertise-peer-urls",
				purl,
				"--initial-cluster",
				cluster,
				"--client-cert-auth",
				"--trusted-ca-file",
				w->ca,
				"--cert-file",
				scert,
				"--key-file",
				skey,
				max_request ? "--max-request-bytes" : NULL,
				(char *)max_request,
				NULL};
		execvp("etcd", argv);
		_exit(127);
	}
	/* until it answers (10 s by the clock) */
	char **urls;
	uint32_t n;
	struct ofc_error err = {0};
	assert_int_equal(etcd_endpoints_parse(w->endpoints, &urls, &n, &err), 0);
	struct etcd_conn *c = etcd_conn_new(urls, n, &w->tls);
	double end = now_seconds() + 10;
	struct etcd_kv *kvs = NULL;
	uint32_t nk = 0;
	int64_t rev;
	int rc = -1;
	while (now_seconds() < end &&
	       (rc = etcd_range(c, "x", NULL, 0.5, &kvs, &nk, &rev, &err)) < 0)
		usleep(50000);
	assert_int_equal(rc, 0);
	free(kvs);
	etcd_conn_free(c);
	etcd_endpoints_free(urls, n);
	free(scert);
	free(skey);
	*state = w;
	return 0;
}

static int etcd_setup(void **state)
{
	return etcd_up(state, NULL);
}

/* An etcd that takes no request over 64 KiB: a value of a few hundred
 * KiB is over one request, as a fabric of 49,152 hosts' journal is over
 * etcd's default 1.5 MiB. */
static int etcd_setup_small(void **state)
{
	return etcd_up(state, "65536");
}

/* ... and one that takes hardly any value at all. */
static int etcd_setup_tiny(void **state)
{
	return etcd_up(state, "300");
}

static int etcd_teardown(void **state)
{
	struct etcd_world *w = *state;
	char *cmd = xasprintf("rm -rf '%s'", w->dir);

	kill(w->pid, SIGKILL);
	waitpid(w->pid, NULL, 0);
	(void)!system(cmd);
	free(cmd);
	free(w);
	return 0;
}

struct replica {
	struct store *s;
	pthread_mutex_t mu;
	unsigned events; /* 1 << store_event */
};

static void on_event(void *ctx, enum store_event ev)
{
	struct replica *r = ctx;

	pthread_mutex_lock(&r->mu);
	r->events |= 1u << ev;
	pthread_mutex_unlock(&r->mu);
}

static void replica_open(struct replica *r, const struct etcd_world *w, const char *name)
{
	struct ofc_error err = {0};
	struct store_etcd_opts o = {
	    .endpoints = w->endpoints,
	    .cacert = w->ca,
	    .cert = w->cert,
	    .key = w->key,
	    .fabric = "fab",
	    .name = name,
	    .advertise_socket = "/run/x.sock",
	    .ttl = 2,
	    .on_event = on_event,
	    .ctx = r,
	};

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->mu, NULL);
	assert_int_equal(store_open_etcd(&o, &r->s, &err), 0);
	assert_int_equal(store_load(r->s, 2, &err), 0);
	assert_int_equal(store_register(r->s, 2, &err), 0);
	assert_int_equal(store_start(r->s, &err), 0);
}

static bool leads(struct replica *r)
{
	return store_epoch(r->s) != 0;
}

/* Wait (up to secs, by the clock) until exactly one of a and b leads;
 * returns it. */
static struct replica *one_leader(struct replica *a, struct replica *b, double secs)
{
	double end = now_seconds() + secs;

	while (now_seconds() < end) {
		if (leads(a) != leads(b))
			return leads(a) ? a : b;
		usleep(20000);
	}
	fail_msg("no single leader after %.0f s (a %d, b %d)", secs, leads(a), leads(b));
	return NULL;
}

/* Wait (up to secs) until a or b was told one of the events in want (1 <<
 * store_event): the store tells its owner after the change it made, from
 * its thread and outside its lock, so a new epoch may show before the
 * event that led to it arrives. */
static void wait_told(struct replica *a, struct replica *b, unsigned want, double secs)
{
	double end = now_seconds() + secs;

	for (;;) {
		pthread_mutex_lock(&a->mu);
		unsigned e = a->events;
		pthread_mutex_unlock(&a->mu);
		pthread_mutex_lock(&b->mu);
		e |= b->events;
		pthread_mutex_unlock(&b->mu);
		if ((e & want) || now_seconds() >= end)
			return;
		usleep(10000);
	}
}

/* Wait (up to secs) until one of a and b leads under an epoch later than
 * epoch; returns it. Each look reads the epochs once (a, b, then a again):
 * a leader deposed between two reads must not pass for a new one, and two
 * replicas count as leading together only when a held the same term
 * before and after b was seen leading. */
static struct replica *new_leader(struct replica *a, struct replica *b, uint64_t epoch, double secs)
{
	double end = now_seconds() + secs;

	while (now_seconds() < end) {
		uint64_t ea = store_epoch(a->s), eb = store_epoch(b->s), ea2 = store_epoch(a->s);

		if (ea && eb && ea == ea2)
			fail_msg("a (epoch %llu) and b (epoch %llu) lead together (before: %llu)",
				 (unsigned long long)ea, (unsigned long long)eb,
				 (unsigned long long)epoch);
		if (ea2 > epoch && !eb)
			return a;
		if (eb > epoch && !ea2)
			return b;
		usleep(10000);
	}
	fail_msg("no leader under an epoch after %llu within %.0f s", (unsigned long long)epoch,
		 secs);
	return NULL;
}

static bool read_is(struct replica *r, enum store_item it, const char *want, double secs)
{
	double end = now_seconds() + secs;
	struct ofc_error err = {0};

	/* read once at least: "at once" (10 ms) was over before the first
	 * read when the machine was loaded */
	for (bool first = true; first || now_seconds() < end; first = false) {
		char *data;
		size_t len;
		bool missing;

		assert_int_equal(store_get(r->s, "fab", it, 1 << 20, &data, &len, &missing, &err),
				 0);
		bool same = want ? !missing && strcmp(data, want) == 0 : missing;

		free(data);
		if (same)
			return true;
		usleep(20000);
	}
	return false;
}

/* The cluster as r sees it, once it knows a leader by name (it learns the
 * leader key through its watch, which may lag the election on a loaded
 * machine): up to secs by the clock. */
static void cluster_known(struct replica *r, struct store_cluster *cl, double secs)
{
	double end = now_seconds() + secs;

	store_cluster(r->s, cl);
	while (!cl->leader[0] && now_seconds() < end) {
		usleep(20000);
		store_cluster(r->s, cl);
	}
}

static void test_etcd_leadership(void **state)
{
	struct etcd_world *w = *state;
	struct replica a, b, *l, *f;
	struct ofc_error err = {0};
	struct store_cluster cl;

	replica_open(&a, w, "a");
	replica_open(&b, w, "b");
	l = one_leader(&a, &b, 10);
	f = l == &a ? &b : &a;
	uint64_t epoch = store_epoch(l->s);
	assert_true(epoch > 0);
	/* the leader may drive devices for most of its lease; the follower not */
	double fence = store_fence(l->s) - now_seconds();
	assert_true(fence > 0 && fence <= 2);
	assert_true(store_fence(f->s) < 0);
	cluster_known(f, &cl, 5);
	assert_true(cl.clustered);
	assert_false(cl.leading);
	assert_string_equal(cl.leader, l == &a ? "a" : "b");
	assert_string_equal(cl.leader_socket, "/run/x.sock");
	assert_int_equal(cl.epoch, epoch);

	/* the leader writes; the follower sees it through its watch */
	struct store_write wr[2] = {{STORE_JOURNAL, "j1", 2}, {STORE_RECORD, "r1", 2}};
	assert_int_equal(store_write(l->s, "fab", wr, 2, &err), 0);
	assert_true(read_is(l, STORE_JOURNAL, "j1", 0.01)); /* at once: its own write */
	assert_true(read_is(f, STORE_JOURNAL, "j1", 5));
	assert_true(read_is(f, STORE_RECORD, "r1", 5));
	/* the follower may not write */
	struct store_write fw = {STORE_RECORD, "mine", 4};
	assert_int_equal(store_write(f->s, "fab", &fw, 1, &err), -1);
	assert_int_equal(err.reason, OFC_R_FENCED);
	assert_true(read_is(l, STORE_RECORD, "r1", 0.01));
	/* the journal's writer runs while its epoch leads */
	assert_true(store_writer_alive(f->s, "fab", 0, epoch));
	assert_false(store_writer_alive(f->s, "fab", 0, epoch + 1));

	/* the leader resigns: the other takes over at once (no TTL to wait),
	 * with the next epoch (one election: one more, though etcd took
	 * writes since), and starts from what the first wrote */
	store_resign(l->s);
	struct replica *l2 = one_leader(&a, &b, 5);
	assert_ptr_equal(l2, f);
	assert_int_equal(store_epoch(l2->s), epoch + 1);
	assert_true(read_is(l2, STORE_JOURNAL, "j1", 0.01));
	assert_true(store_fence(l->s) < 0);
	/* the old leader writes nothing any more */
	struct store_write late = {STORE_JOURNAL, "late", 4};
	assert_int_equal(store_write(l->s, "fab", &late, 1, &err), -1);
	assert_int_equal(err.reason, OFC_R_FENCED);
	struct store_write rm = {STORE_JOURNAL, NULL, 0};
	assert_int_equal(store_write(l2->s, "fab", &rm, 1, &err), 0);
	assert_true(read_is(l, STORE_JOURNAL, NULL, 5));
	pthread_mutex_lock(&f->mu);
	assert_true(f->events & (1u << STORE_EV_LEADER));
	pthread_mutex_unlock(&f->mu);
	store_close(a.s);
	store_close(b.s);
}

/* The leader key taken from under the leader (an operator's `etcdctl
 * del`, or its lease expired while it was paused): it leads no more at
 * once, writes nothing (refused by the epoch or, once its watch said so,
 * before asking), and the other replica takes over. */
static void test_etcd_key_deleted(void **state)
{
	struct etcd_world *w = *state;
	struct replica a, b, *l, *f;
	struct ofc_error err = {0};
	char **urls;
	uint32_t n;

	replica_open(&a, w, "a");
	replica_open(&b, w, "b");
	l = one_leader(&a, &b, 10);
	f = l == &a ? &b : &a;
	uint64_t epoch = store_epoch(l->s);
	struct store_write wr = {STORE_RECORD, "r1", 2};
	assert_int_equal(store_write(l->s, "fab", &wr, 1, &err), 0);

	assert_int_equal(etcd_endpoints_parse(w->endpoints, &urls, &n, &err), 0);
	struct etcd_conn *c = etcd_conn_new(urls, n, &w->tls);
	struct json_object *t = etcd_txn_new(), *resp;
	bool ok;
	int64_t rev;
	etcd_txn_delete(t, true, "/ofc/fab/leader");
	assert_int_equal(etcd_txn(c, t, 2, &ok, &rev, &resp, &err), 0);
	assert_true(ok);
	json_object_put(resp);
	json_object_put(t);
	etcd_conn_free(c);
	etcd_endpoints_free(urls, n);

	struct store_write late = {STORE_RECORD, "late", 4};
	assert_int_equal(store_write(l->s, "fab", &late, 1, &err), -1);
	assert_int_equal(err.reason, OFC_R_FENCED);
	/* (it may campaign again at once, and win: then it leads anew) */
	assert_true(leads(l) ? store_epoch(l->s) > epoch : store_fence(l->s) < 0);
	double end = now_seconds() + 10;
	while (!leads(f) && !leads(l) && now_seconds() < end)
		usleep(20000);
	assert_true(leads(f) || leads(l));
	struct replica *l2 = leads(f) ? f : l;
	assert_true(store_epoch(l2->s) > epoch);
	assert_true(read_is(l2, STORE_RECORD, "r1", 0.01));
	store_close(a.s);
	store_close(b.s);
}

/* The leader key written over, bound to the follower's lease (`etcdctl
 * put KEY V --lease=...` keeps its create revision, the epoch): the leader
 * writes nothing more (the key's lease is compared too), the follower does
 * not lead under that epoch, deletes the key once the leader stopped, and
 * one of them leads under a new epoch; never both at once. */
static void test_etcd_key_rebound(void **state)
{
	struct etcd_world *w = *state;
	struct replica a, b, *l, *f;
	struct ofc_error err = {0};
	struct etcd_kv *kv;
	uint32_t nk, n;
	int64_t rev;
	char **urls;
	bool ok;

	replica_open(&a, w, "a");
	replica_open(&b, w, "b");
	l = one_leader(&a, &b, 10);
	f = l == &a ? &b : &a;
	uint64_t epoch = store_epoch(l->s);
	assert_int_equal(etcd_endpoints_parse(w->endpoints, &urls, &n, &err), 0);
	struct etcd_conn *c = etcd_conn_new(urls, n, &w->tls);
	/* (the follower's registration, written at its start, is bound to
	 * its lease) */
	assert_int_equal(etcd_range(c, f == &a ? "/ofc/fab/replicas/a" : "/ofc/fab/replicas/b",
				    NULL, 2, &kv, &nk, &rev, &err),
			 0);
	assert_int_equal(nk, 1);
	struct json_object *t = etcd_txn_new(), *resp;
	etcd_txn_put(t, true, "/ofc/fab/leader", "{\"name\":\"x\"}", 12, kv[0].lease);
	assert_int_equal(etcd_txn(c, t, 2, &ok, &rev, &resp, &err), 0);
	assert_true(ok);
	json_object_put(resp);
	json_object_put(t);
	etcd_kv_free(&kv[0]);
	free(kv);

	struct store_write late = {STORE_RECORD, "late", 4};
	assert_int_equal(store_write(l->s, "fab", &late, 1, &err), -1);
	assert_int_equal(err.reason, OFC_R_FENCED);
	assert_int_not_equal(store_epoch(f->s), epoch);
	new_leader(&a, &b, epoch, 10);
	wait_told(f, l, (1u << STORE_EV_FORGED) | (1u << STORE_EV_NO_LEADER), 10);
	/* deleted by the follower as bound to its lease, or by either as
	 * naming no registered replica ("x"): whichever looked first */
	pthread_mutex_lock(&f->mu);
	unsigned fe = f->events;
	pthread_mutex_unlock(&f->mu);
	pthread_mutex_lock(&l->mu);
	unsigned le = l->events;
	pthread_mutex_unlock(&l->mu);
	assert_true((fe & (1u << STORE_EV_FORGED)) || ((fe | le) & (1u << STORE_EV_NO_LEADER)));
	etcd_conn_free(c);
	etcd_endpoints_free(urls, n);
	store_close(a.s);
	store_close(b.s);
}

/* A leader key no replica holds: put over the leader's with no lease,
 * naming a replica that is not registered (r9). Every replica followed it
 * for as long as it stayed; now one of them deletes it (comparing its
 * create revision and lease) once the deposed leader's registration says
 * it stopped, and one leads under the next epoch: one election, one more. */
static void test_etcd_key_unheld(void **state)
{
	struct etcd_world *w = *state;
	struct replica a, b, *l;
	struct ofc_error err = {0};
	int64_t rev;
	char **urls;
	uint32_t n;
	bool ok;

	replica_open(&a, w, "a");
	replica_open(&b, w, "b");
	l = one_leader(&a, &b, 10);
	uint64_t epoch = store_epoch(l->s);
	assert_int_equal(etcd_endpoints_parse(w->endpoints, &urls, &n, &err), 0);
	struct etcd_conn *c = etcd_conn_new(urls, n, &w->tls);
	struct json_object *t = etcd_txn_new(), *resp;
	struct etcd_kv *kv;
	uint32_t nk;
	assert_int_equal(etcd_range(c, "/ofc/fab/leader", NULL, 2, &kv, &nk, &rev, &err), 0);
	assert_int_equal(nk, 1);
	int64_t created = kv[0].create_rev;
	etcd_kv_free(&kv[0]);
	free(kv);
	etcd_txn_put(t, true, "/ofc/fab/leader", "{\"name\":\"r9\"}", 13, 0);
	assert_int_equal(etcd_txn(c, t, 2, &ok, &rev, &resp, &err), 0);
	assert_true(ok);
	json_object_put(resp);
	json_object_put(t);
	assert_int_equal(store_epoch(new_leader(&a, &b, epoch, 15)->s), epoch + 1);
	wait_told(&a, &b, 1u << STORE_EV_NO_LEADER, 10);
	pthread_mutex_lock(&a.mu);
	unsigned ae = a.events;
	pthread_mutex_unlock(&a.mu);
	pthread_mutex_lock(&b.mu);
	unsigned be = b.events;
	pthread_mutex_unlock(&b.mu);
	assert_true((ae | be) & (1u << STORE_EV_NO_LEADER));
	struct store_cluster cl;
	store_cluster(((ae & (1u << STORE_EV_NO_LEADER)) ? &a : &b)->s, &cl);
	char want[96];
	snprintf(want, sizeof(want),
		 "the leader key (created at revision %lld) was bound to no lease",
		 (long long)created);
	assert_string_equal(cl.unheld, want);
	etcd_conn_free(c);
	etcd_endpoints_free(urls, n);
	store_close(a.s);
	store_close(b.s);
}

/* The cluster as r sees it once it lists n replicas (up to secs). */
static void replicas_known(struct replica *r, struct store_cluster *cl, uint32_t n, double secs)
{
	double end = now_seconds() + secs;

	store_cluster(r->s, cl);
	while ((cl->nreplicas != n || !cl->leader[0]) && now_seconds() < end) {
		usleep(20000);
		store_cluster(r->s, cl);
	}
}

static const struct store_replica *replica_named(const struct store_cluster *cl, const char *name)
{
	for (uint32_t i = 0; i < cl->nreplicas; i++)
		if (strcmp(cl->replicas[i].name, name) == 0)
			return &cl->replicas[i];
	return NULL;
}

/* The held partitions go with the record in one transaction of the
 * leader's, under its epoch, to the follower's reads; each replica is
 * registered and listed by both, and a third under a name that runs is
 * refused, naming where that one runs. */
static void test_etcd_held_and_replicas(void **state)
{
	struct etcd_world *w = *state;
	struct replica a, b, *l, *f;
	struct ofc_error err = {0};
	struct store_cluster cl;

	replica_open(&a, w, "a");
	replica_open(&b, w, "b");
	l = one_leader(&a, &b, 10);
	f = l == &a ? &b : &a;
	char *key = store_where(l->s, "fab", STORE_HELD);
	assert_string_equal(key, "/ofc/fab/held");
	free(key);
	struct store_write wr[2] = {{STORE_HELD, "h1", 2}, {STORE_RECORD, "r1", 2}};
	assert_int_equal(store_write(l->s, "fab", wr, 2, &err), 0);
	assert_true(read_is(f, STORE_HELD, "h1", 5));
	assert_true(read_is(f, STORE_RECORD, "r1", 5));
	struct store_write fw = {STORE_HELD, "mine", 4};
	assert_int_equal(store_write(f->s, "fab", &fw, 1, &err), -1);
	assert_int_equal(err.reason, OFC_R_FENCED);
	assert_true(read_is(l, STORE_HELD, "h1", 0.01));

	/* both listed by both, the leader as leader once it wrote so */
	for (int k = 0; k < 2; k++) {
		struct replica *r = k ? f : l;
		double end = now_seconds() + 5;
		const struct store_replica *me;

		do {
			replicas_known(r, &cl, 2, 5);
			me = replica_named(&cl, l == &a ? "a" : "b");
		} while ((!me || strcmp(me->role, "leader") != 0) && now_seconds() < end &&
			 !usleep(20000));
		assert_int_equal(cl.nreplicas, 2);
		assert_non_null(me);
		assert_string_equal(me->role, "leader");
		assert_int_equal(me->epoch, store_epoch(l->s));
		me = replica_named(&cl, f == &a ? "a" : "b");
		assert_non_null(me);
		assert_string_equal(me->role, "follower");
		assert_string_equal(me->socket, "/run/x.sock");
		assert_int_equal(me->pid, (uint32_t)getpid());
		assert_true(me->started_ms > 0 && me->written_ms >= me->started_ms);
		assert_true(me->host[0]);
	}
	/* a third "a": this process's own pid holds it, alive: refused */
	struct store *dup;
	struct store_etcd_opts o = {.endpoints = w->endpoints,
				    .cacert = w->ca,
				    .cert = w->cert,
				    .key = w->key,
				    .fabric = "fab",
				    .name = "a",
				    .ttl = 2};
	assert_int_equal(store_open_etcd(&o, &dup, &err), 0);
	assert_int_equal(store_load(dup, 2, &err), 0);
	assert_int_equal(store_register(dup, 2, &err), -1);
	assert_int_equal(err.code, OFC_E_USAGE);
	char *pid = xasprintf("(pid %d, socket /run/x.sock)", (int)getpid());
	assert_non_null(strstr(err.msg, "--cluster-name a: a replica of fabric fab runs under "
					"that name already"));
	assert_non_null(strstr(err.msg, pid));
	free(pid);
	store_close(dup);
	replicas_known(f, &cl, 2, 1);
	assert_int_equal(cl.nreplicas, 2);
	store_close(a.s);
	store_close(b.s);
}

/* One range on w's etcd through a connection to endpoints with tls. */
static int try_range(const char *endpoints, const struct etcd_tls *tls, struct ofc_error *err)
{
	char **urls;
	uint32_t n;
	struct etcd_kv *kvs = NULL;
	uint32_t nk = 0;
	int64_t rev;

	assert_int_equal(etcd_endpoints_parse(endpoints, &urls, &n, err), 0);
	struct etcd_conn *c = etcd_conn_new(urls, n, tls);
	int rc = etcd_range(c, "x", NULL, 1, &kvs, &nk, &rev, err);

	free(kvs);
	etcd_conn_free(c);
	etcd_endpoints_free(urls, n);
	return rc;
}

/* etcd with --client-cert-auth answers only a client whose certificate
 * its CA signed, and the client speaks only to a member its CA vouches
 * for: every other way fails closed. */
static void test_etcd_tls(void **state)
{
	struct etcd_world *w = *state;
	struct ofc_error err = {0};
	char other_ca[96], icert[96], ikey[96], plain[64];
	struct store *s = NULL;

	snprintf(other_ca, sizeof(other_ca), "%s/other.pem", w->dir);
	snprintf(icert, sizeof(icert), "%s/intruder.pem", w->dir);
	snprintf(ikey, sizeof(ikey), "%s/intruder.key", w->dir);
	snprintf(plain, sizeof(plain), "etcd://%s", w->endpoints + strlen("etcds://"));

	assert_int_equal(try_range(w->endpoints, &w->tls, &err), 0);
	/* another CA's client certificate: etcd refuses it. (In TLS 1.3 it
	 * says so after the handshake, and the client may see its alert or
	 * only the connection reset: a TLS error or a member that does not
	 * answer, never an answer.) */
	struct etcd_tls intruder = {w->ca, icert, ikey};
	assert_int_equal(try_range(w->endpoints, &intruder, &err), -1);
	assert_true(err.reason == OFC_R_CREDENTIALS || err.reason == OFC_R_LOST);
	/* no client certificate at all */
	struct etcd_tls anon = {w->ca, NULL, NULL};
	assert_int_equal(try_range(w->endpoints, &anon, &err), -1);
	assert_true(err.reason == OFC_R_CREDENTIALS || err.reason == OFC_R_LOST);
	/* a member another CA does not vouch for: not spoken to */
	struct etcd_tls wrong_ca = {other_ca, w->cert, w->key};
	assert_int_equal(try_range(w->endpoints, &wrong_ca, &err), -1);
	assert_int_equal(err.reason, OFC_R_CREDENTIALS);
	assert_non_null(strstr(err.msg, "etcd: TLS with no member succeeded"));
	/* plain http to the TLS port */
	assert_int_equal(try_range(plain, NULL, &err), -1);

	/* the store: etcds:// needs the three files, etcd:// takes none */
	struct store_etcd_opts o = {.endpoints = w->endpoints,
				    .cert = w->cert,
				    .key = w->key,
				    .fabric = "fab",
				    .name = "t",
				    .ttl = 2};
	assert_int_equal(store_open_etcd(&o, &s, &err), -1);
	assert_int_equal(err.code, OFC_E_USAGE);
	assert_non_null(strstr(err.msg, "--cluster-cacert"));
	o.endpoints = plain;
	o.cacert = w->ca;
	assert_int_equal(store_open_etcd(&o, &s, &err), -1);
	assert_int_equal(err.code, OFC_E_USAGE);
	assert_null(s);
	/* and a wrong scheme is refused, naming the right ones */
	char **urls;
	uint32_t n;
	assert_int_equal(etcd_endpoints_parse("https://127.0.0.1:1", &urls, &n, &err), -1);
	assert_non_null(strstr(err.msg, "etcds://"));
}

/* ---- values larger than one etcd request ------------------------------------------- */

/* len bytes that do not compress or repeat, starting as a protobuf does
 * (a tag: never a head of parts). Caller frees. */
static uint8_t *big_value(size_t len, uint32_t seed)
{
	uint8_t *v = xmalloc(len);
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		v[i] = (uint8_t)(x >> 16);
	}
	v[0] = 0x0a;
	return v;
}

/* Whether r reads want as item it within secs (each read must succeed:
 * a reader never sees a head without its parts). */
static bool holds(struct replica *r, enum store_item it, const uint8_t *want, size_t wlen,
		  double secs)
{
	double end = now_seconds() + secs;
	struct ofc_error err = {0};

	for (bool first = true; first || now_seconds() < end; first = false) {
		char *data;
		size_t len;
		bool missing;

		assert_int_equal(store_get(r->s, "fab", it, 1 << 24, &data, &len, &missing, &err),
				 0);
		bool same = !missing && len == wlen && memcmp(data, want, wlen) == 0;

		free(data);
		if (same)
			return true;
		usleep(20000);
	}
	return false;
}

static void wait_leads(struct replica *r, double secs)
{
	double end = now_seconds() + secs;

	while (!leads(r) && now_seconds() < end)
		usleep(20000);
	assert_true(leads(r));
}

/* etcd's keys from key up to end, straight from etcd (caller frees). */
static uint32_t raw_range(const struct etcd_world *w, const char *key, const char *end,
			  struct etcd_kv **kvs)
{
	struct ofc_error err = {0};
	char **urls;
	uint32_t n, nk = 0;
	int64_t rev;

	assert_int_equal(etcd_endpoints_parse(w->endpoints, &urls, &n, &err), 0);
	struct etcd_conn *c = etcd_conn_new(urls, n, &w->tls);
	assert_int_equal(etcd_range(c, key, end, 2, kvs, &nk, &rev, &err), 0);
	etcd_conn_free(c);
	etcd_endpoints_free(urls, n);
	return nk;
}

/* Put (value) or delete (NULL) key behind the store's back, as an
 * operator or a damaged disk might. */
static void raw_write(const struct etcd_world *w, const char *key, const void *value, size_t len)
{
	struct ofc_error err = {0};
	struct json_object *t = etcd_txn_new(), *resp = NULL;
	char **urls;
	uint32_t n;
	bool ok = false;
	int64_t rev;

	assert_int_equal(etcd_endpoints_parse(w->endpoints, &urls, &n, &err), 0);
	struct etcd_conn *c = etcd_conn_new(urls, n, &w->tls);
	if (value)
		etcd_txn_put(t, true, key, value, len, 0);
	else
		etcd_txn_delete(t, true, key);
	assert_int_equal(etcd_txn(c, t, 2, &ok, &rev, &resp, &err), 0);
	assert_true(ok);
	json_object_put(t);
	json_object_put(resp);
	etcd_conn_free(c);
	etcd_endpoints_free(urls, n);
}

static void kvs_drop(struct etcd_kv *kvs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		etcd_kv_free(&kvs[i]);
	free(kvs);
}

/* The lease of NAME's registration in etcd (0: none, or no such key). */
static int64_t registration_lease(const struct etcd_world *w, const char *name)
{
	char key[128];
	struct etcd_kv *kv;

	snprintf(key, sizeof(key), "/ofc/fab/replicas/%s", name);
	uint32_t n = raw_range(w, key, NULL, &kv);
	int64_t lease = n ? kv[0].lease : 0;
	kvs_drop(kv, n);
	return lease;
}

/* A registration write that etcd applied but whose answer was lost (a
 * timeout on a loaded machine) leaves the name held by this very replica
 * when it registers again under a new lease (here: its lease revoked
 * behind its back, its registration put back as that write left it, bound
 * to no lease the replica knows). The replica takes it as its own and
 * leads again; taken for another replica's, it stopped campaigning for
 * good ("another replica registered as a"). */
static void test_etcd_own_registration(void **state)
{
	struct etcd_world *w = *state;
	struct replica a;
	struct ofc_error err = {0};
	char **urls;
	uint32_t n;

	replica_open(&a, w, "a");
	wait_leads(&a, 10);
	int64_t first = registration_lease(w, "a");
	assert_int_not_equal(first, 0);
	struct etcd_kv *kv;
	assert_int_equal(raw_range(w, "/ofc/fab/replicas/a", NULL, &kv), 1);

	assert_int_equal(etcd_endpoints_parse(w->endpoints, &urls, &n, &err), 0);
	struct etcd_conn *c = etcd_conn_new(urls, n, &w->tls);
	assert_int_equal(etcd_lease_revoke(c, first, 2, &err), 0);
	etcd_conn_free(c);
	etcd_endpoints_free(urls, n);
	raw_write(w, "/ofc/fab/replicas/a", kv[0].value, kv[0].len);
	kvs_drop(kv, 1);
	double end = now_seconds() + 10;
	while (now_seconds() < end && !(leads(&a) && registration_lease(w, "a") != 0 &&
					registration_lease(w, "a") != first))
		usleep(50000);
	assert_true(leads(&a));
	int64_t second = registration_lease(w, "a");
	assert_int_not_equal(second, 0);
	assert_int_not_equal(second, first);
	struct store_cluster cl;
	store_cluster(a.s, &cl);
	assert_true(strstr(cl.why, "another replica registered") == NULL);
	store_close(a.s);
}

/* Wait (secs) until r's read of it is refused naming what. */
static void refused_naming(struct replica *r, enum store_item it, const char *what, double secs)
{
	double end = now_seconds() + secs;
	struct ofc_error err = {0};
	char *data = NULL;
	size_t len;
	bool missing;

	/* (until it names what: a follower's watch may not have seen the
	 * latest change yet, and still refuse the one before) */
	for (;;) {
		data = NULL;
		err = (struct ofc_error){0};
		int rc = store_get(r->s, "fab", it, 1 << 24, &data, &len, &missing, &err);
		if ((rc < 0 && strstr(err.msg, what)) || now_seconds() >= end)
			break;
		free(data);
		usleep(20000);
	}
	assert_null(data);
	assert_int_equal(err.reason, OFC_R_GARBAGE);
	if (!strstr(err.msg, what))
		fail_msg("'%s' does not name '%s'", err.msg, what);
}

/* A record and a journal each several times etcd's request limit commit
 * as parts, are read back by a new leader after the first died without a
 * word and by a follower through its watch, leave no parts behind when
 * written again, and a damaged or missing part is refused by its key. */
static void test_etcd_parts(void **state)
{
	struct etcd_world *w = *state;
	struct replica a, b, c;
	struct ofc_error err = {0};
	struct etcd_kv *kvs;
	uint32_t n;
	size_t rlen = 300000, jlen = 200000;
	uint8_t *rec = big_value(rlen, 1), *jou = big_value(jlen, 2), *jou2 = big_value(jlen, 3);

	replica_open(&a, w, "a");
	wait_leads(&a, 10);
	struct store_write wr[3] = {
	    {STORE_RECORD, rec, rlen}, {STORE_JOURNAL, jou, jlen}, {STORE_FAILED, "h1\n", 3}};
	if (store_write(a.s, "fab", wr, 3, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(holds(&a, STORE_RECORD, rec, rlen, 0.01));
	assert_true(holds(&a, STORE_JOURNAL, jou, jlen, 0.01));
	/* in etcd: the record's key holds a head, its parts each under the
	 * limit, together the record */
	n = raw_range(w, "/ofc/fab/state", NULL, &kvs);
	assert_int_equal(n, 1);
	assert_memory_equal(kvs[0].value, "ofc-parts 1 ", 12);
	kvs_drop(kvs, n);
	n = raw_range(w, "/ofc/fab/state/part/", "/ofc/fab/state/part0", &kvs);
	assert_true(n >= rlen / 65536 + 1);
	size_t sum = 0;
	for (uint32_t i = 0; i < n; i++) {
		assert_true(kvs[i].len < 65536);
		sum += kvs[i].len - 8;
	}
	assert_int_equal(sum, rlen);
	kvs_drop(kvs, n);

	/* the leader dies without a word (its lease left to run out): a new
	 * replica takes over and reads both back */
	store_close(a.s);
	replica_open(&b, w, "b");
	wait_leads(&b, 10);
	assert_true(holds(&b, STORE_RECORD, rec, rlen, 0.01));
	assert_true(holds(&b, STORE_JOURNAL, jou, jlen, 0.01));
	/* a follower follows */
	replica_open(&c, w, "c");
	assert_true(holds(&c, STORE_JOURNAL, jou, jlen, 5));

	/* written small again, the record's parts go with its head's
	 * transaction; the journal written again keeps only its new parts */
	struct store_write wr2[2] = {{STORE_RECORD, "\x0asmall", 6}, {STORE_JOURNAL, jou2, jlen}};
	assert_int_equal(store_write(b.s, "fab", wr2, 2, &err), 0);
	n = raw_range(w, "/ofc/fab/state/part/", "/ofc/fab/state/part0", &kvs);
	assert_int_equal(n, 0);
	kvs_drop(kvs, n);
	assert_true(holds(&c, STORE_RECORD, (const uint8_t *)"\x0asmall", 6, 5));
	assert_true(holds(&c, STORE_JOURNAL, jou2, jlen, 5));
	n = raw_range(w, "/ofc/fab/journal/part/", "/ofc/fab/journal/part0", &kvs);
	assert_true(n >= 2);
	char *gen = xstrdup(kvs[0].key);
	*strrchr(gen, '/') = 0;
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(strncmp(kvs[i].key, gen, strlen(gen)), 0);
	/* a part changed behind ofc's back is refused by its key, as is one
	 * gone */
	char *part1 = xstrdup(kvs[1].key), *part0 = xstrdup(kvs[0].key);
	kvs[1].value[20] ^= 1;
	raw_write(w, part1, kvs[1].value, kvs[1].len);
	kvs_drop(kvs, n);
	refused_naming(&c, STORE_JOURNAL, part1, 5);
	raw_write(w, part0, NULL, 0);
	refused_naming(&c, STORE_JOURNAL, part0, 5);
	store_close(b.s);
	store_close(c.s);
	free(gen);
	free(part0);
	free(part1);
	free(rec);
	free(jou);
	free(jou2);
}

/* A value that does not fit even as the smallest parts: the error names
 * its size and the option of etcd's to raise, and nothing is written. */
static void test_etcd_parts_refused(void **state)
{
	struct etcd_world *w = *state;
	struct ofc_error err = {0};
	struct json_object *resp = NULL;
	char **urls, *keys[1] = {"/ofc/fab/state"};
	uint32_t n;
	size_t part = parts_first_size();
	bool ok = false;
	int64_t rev = 0;
	uint8_t *v = big_value(3000, 4);
	struct store_write wr = {STORE_RECORD, v, 3000};
	struct etcd_kv *kvs;

	assert_int_equal(etcd_endpoints_parse(w->endpoints, &urls, &n, &err), 0);
	struct etcd_conn *c = etcd_conn_new(urls, n, &w->tls);
	/* (fenced by a key nobody holds: create revision 0, no lease) */
	assert_int_equal(parts_write(c, &(struct parts_fence){"/ofc/fab/leader", 0, 0, 5}, keys,
				     &wr, 1, &part, &ok, &rev, &resp, &err),
			 -1);
	if (!strstr(err.msg, "--max-request-bytes") || !strstr(err.msg, "raise it"))
		fail_msg("%s", err.msg);
	assert_non_null(strstr(err.msg, "3000 bytes"));
	assert_int_equal(raw_range(w, "/ofc/fab/state", NULL, &kvs), 0);
	free(kvs);
	etcd_conn_free(c);
	etcd_endpoints_free(urls, n);
	free(v);
}

/* A campaign waits for an answer that carries the fabric's keys: longer
 * as they grow (a 65,536-host record and journal), never past half a
 * lease; as before for a small fabric. */
static void test_campaign_timeout(void **state)
{
	(void)state;
	assert_true(etcd_campaign_timeout(0.5, 2, true, 4096) < 0.51);
	assert_true(etcd_campaign_timeout(0.5, 2, true, 0) >= 0.5);
	assert_true(etcd_campaign_timeout(0.05, 2, true, 0) >= 0.2);
	/* 1.6 MB: 0.4 s more */
	assert_true(etcd_campaign_timeout(0.5, 4, true, 1600000) > 0.89);
	/* 3.6 MB with a 2 s lease: half of it */
	assert_true(etcd_campaign_timeout(0.5, 2, true, 3600000) == 1.0);
	/* nothing loaded yet: as long as may be */
	assert_true(etcd_campaign_timeout(0.5, 2, false, 0) == 1.0);
	/* a lease so short that half of it is below the tick: the tick */
	assert_true(etcd_campaign_timeout(0.5, 0.6, true, 1u << 30) == 0.5);
}

/* A member that hangs up at once (down, or its port refused): a call goes
 * round the members until its deadline, with a pause after each round in
 * which none answered, not a busy loop of connections. The member here
 * accepts and closes, counting; 0.5 s of rounds at 50 ms a pause is about
 * ten tries, a busy loop thousands. */
struct hangup {
	int fd;
	atomic_int tries;
	atomic_bool stop;
};

static void *hangup_main(void *arg)
{
	struct hangup *h = arg;

	while (!atomic_load(&h->stop)) {
		struct pollfd p = {.fd = h->fd, .events = POLLIN};

		if (poll(&p, 1, 20) == 1) {
			int c = accept(h->fd, NULL, NULL);

			if (c >= 0) {
				atomic_fetch_add(&h->tries, 1);
				close(c);
			}
		}
	}
	return NULL;
}

static void test_etcd_round_pause(void **state)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	struct hangup h = {.fd = socket(AF_INET, SOCK_STREAM, 0)};
	struct ofc_error err = {0};
	struct etcd_tls tls = {0};
	struct json_object *body = json_object_new_object(), *resp = NULL;
	pthread_t t;
	char url[64], *urls[] = {url};

	(void)state;
	assert_int_equal(etcd_curl(&err), 0);
	assert_true(h.fd >= 0);
	assert_int_equal(bind(h.fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(h.fd, 64), 0);
	assert_int_equal(getsockname(h.fd, (struct sockaddr *)&a, &alen), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(a.sin_port));
	assert_int_equal(pthread_create(&t, NULL, hangup_main, &h), 0);

	struct etcd_conn *c = etcd_conn_new(urls, 1, &tls);

	assert_int_equal(etcd_call(c, "/v3/kv/range", body, 0.5, &resp, &err), -1);
	assert_null(resp);
	assert_int_equal(err.reason, OFC_R_LOST);
	int tries = atomic_load(&h.tries);

	atomic_store(&h.stop, true);
	pthread_join(t, NULL);
	/* asked again after a pause, and not much more than a round a pause */
	assert_true(tries >= 2);
	if (tries > 20)
		fail_msg("%d tries in 0.5 s: no pause between rounds", tries);
	etcd_conn_free(c);
	json_object_put(body);
	close(h.fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_files),
	    cmocka_unit_test(test_campaign_timeout),
	    cmocka_unit_test(test_etcd_round_pause),
	    cmocka_unit_test_setup_teardown(test_etcd_leadership, etcd_setup, etcd_teardown),
	    cmocka_unit_test_setup_teardown(test_etcd_key_deleted, etcd_setup, etcd_teardown),
	    cmocka_unit_test_setup_teardown(test_etcd_key_rebound, etcd_setup, etcd_teardown),
	    cmocka_unit_test_setup_teardown(test_etcd_key_unheld, etcd_setup, etcd_teardown),
	    cmocka_unit_test_setup_teardown(test_etcd_own_registration, etcd_setup, etcd_teardown),
	    cmocka_unit_test_setup_teardown(test_etcd_held_and_replicas, etcd_setup, etcd_teardown),
	    cmocka_unit_test_setup_teardown(test_etcd_tls, etcd_setup, etcd_teardown),
	    cmocka_unit_test_setup_teardown(test_etcd_parts, etcd_setup_small, etcd_teardown),
	    cmocka_unit_test_setup_teardown(test_etcd_parts_refused, etcd_setup_tiny,
					    etcd_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
