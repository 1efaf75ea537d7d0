/* Exports (controller/export): the fabric and a topology packed as
 * protobuf decode to the model they came from; a schedule written step by
 * step decodes, once protobuf merges the pieces, to one message with every
 * step and transfer in order, byte for byte the message tree packed whole
 * and read back by schedule_read_pb; a symmetry-reduced schedule carries its
 * group and expands to one the verifier accepts; the JSON of a message is the same data, and
 * a schedule's summary its flat shape; the text of `ofc show` names what the fabric holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "alltoall/alltoall.h"
#include "baselines/baselines.h"
#include "bfb/bfb.h"
#include "controller/config/config.h"
#include "controller/export/export.h"

static const char cfg[] = "name: xfab\n"
			  "description: sixteen hosts\n"
			  "hosts: {count: 16, prefix: h, ports: 4}\n"
			  "switches:\n"
			  "  - {name: ocs0, type: ocs, ports: 64}\n"
			  "wiring: {pattern: sequential, switches: [ocs0]}\n"
			  "topology: torus:4x4\n"
			  "collectives:\n"
			  "  - {op: allreduce, size: 1MiB}\n";

static struct fabric *load(void)
{
	struct fabric *f;
	struct ofc_error err = {0};

	assert_int_equal(config_parse("x.yaml", cfg, strlen(cfg), &f, &err), 0);
	assert_int_equal(fabric_validate(f, &err), 0);
	return f;
}

static void test_fabric_pb(void **state)
{
	struct fabric *f = load();
	struct ofc_error err = {0};
	uint8_t *buf;
	size_t len;

	(void)state;
	assert_int_equal(fabric_pack(f, &buf, &len, &err), 0);
	Ofc__V1__Fabric *m = ofc__v1__fabric__unpack(NULL, len, buf);
	assert_non_null(m);
	assert_string_equal(m->name, "xfab");
	assert_string_equal(m->description, "sixteen hosts");
	assert_int_equal(m->n_hosts, 16);
	assert_string_equal(m->hosts[15]->name, "h15");
	assert_int_equal(m->hosts[3]->ports, 4);
	assert_int_equal(m->n_switches, 1);
	assert_int_equal(m->switches[0]->ports, 64);
	assert_int_equal(m->n_wiring, f->nwiring);
	assert_string_equal(m->topology->spec, "torus:4x4");
	assert_int_equal(m->n_collectives, 1);
	assert_int_equal(m->collectives[0]->op, (int)SCHED_ALLREDUCE);
	assert_int_equal(m->collectives[0]->size_bytes, 1u << 20);
	/* 16 hosts x 4 ports: one circuit per arc of the torus */
	assert_int_equal(m->n_circuits, f->ncircuits);
	assert_int_equal(m->n_circuits, 64);
	for (size_t i = 0; i < m->n_circuits; i++) {
		const struct circuit *c = &f->circuits[i];

		assert_int_equal(m->circuits[i]->in_port, c->in_port);
		assert_int_equal(m->circuits[i]->out_port, c->out_port);
		assert_string_equal(m->circuits[i]->src_host, f->hosts[c->src_host].name);
	}
	assert_non_null(m->logical);
	assert_int_equal(m->logical->nodes, 16);
	ofc__v1__fabric__free_unpacked(m, NULL);
	free(buf);
	fabric_free(f);
}

static void test_topology_pb(void **state)
{
	struct graph *g;
	struct topo_facts facts;
	struct port_map pm;
	struct ofc_error err = {0};
	uint8_t *buf;
	size_t len;

	(void)state;
	assert_int_equal(topo_build("circulant:12:1,5", &g, &err), 0);
	topo_facts(g, &facts, 0);
	assert_int_equal(topo_ports(g, &pm, &err), 0);
	assert_int_equal(topology_pack(g, &facts, &pm, &buf, &len), 0);
	Ofc__V1__Topology *m = ofc__v1__topology__unpack(NULL, len, buf);
	assert_non_null(m);
	assert_string_equal(m->spec, "circulant:12:1,5");
	assert_int_equal(m->nodes, 12);
	assert_int_equal(m->degree, 4);
	assert_int_equal(m->diameter, facts.diameter);
	ofc__v1__topology__free_unpacked(m, NULL);
	free(buf);
	port_map_free(&pm);
	graph_free(g);
}

/* The schedule's pieces, concatenated, are one Schedule message. */
static void test_schedule_pb_streamed(void **state)
{
	struct graph *g;
	struct schedule s;
	struct bfb_stats st;
	struct bfb_opts bo = {0};
	struct ofc_error err = {0};
	char *data = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(topo_build("torus:4x4", &g, &err), 0);
	assert_int_equal(bfb_schedule(g, SCHED_ALLREDUCE, &bo, &s, &st, &err), 0);
	s.time_us = 12.5;
	sched_set_metric(&s, "tau_b", st.tau_b_value);
	FILE *mem = open_memstream(&data, &len);
	assert_int_equal(schedule_write_pb(&s, mem, &err), 0);
	fclose(mem);
	Ofc__V1__Schedule *m = ofc__v1__schedule__unpack(NULL, len, (uint8_t *)data);
	assert_non_null(m);
	assert_string_equal(m->collective, "allreduce");
	assert_string_equal(m->algorithm, "bfb");
	assert_int_equal(m->nodes, 16);
	assert_int_equal(m->num_steps, s.nsteps);
	assert_int_equal(m->n_steps, s.nsteps);
	assert_true(m->time_us == 12.5);
	size_t k = 0;
	for (uint32_t t = 0; t < s.nsteps; t++) {
		assert_int_equal(m->steps[t]->n_transfers, sched_step_size(&s, t));
		for (size_t i = 0; i < m->steps[t]->n_transfers; i++, k++) {
			assert_int_equal(m->steps[t]->transfers[i]->src, s.xfers[k].src);
			assert_int_equal(m->steps[t]->transfers[i]->dst, s.xfers[k].dst);
		}
	}
	assert_int_equal(k, s.nxfers);
	bool found = false;
	for (size_t i = 0; i < m->n_metrics; i++)
		if (strcmp(m->metrics[i]->key, "tau_b") == 0)
			found = m->metrics[i]->value == st.tau_b_value;
	assert_true(found);
	ofc__v1__schedule__free_unpacked(m, NULL);
	free(data);
	sched_free(&s);
	graph_free(g);
}

/* A symmetry-reduced schedule: node 0's program with the group decodes to
 * a program that, translated by the group read back, is a schedule the
 * explicit verifier accepts; schedule_read_pb refuses it (it is not the
 * whole schedule). */
static void test_schedule_pb_reduced(void **state)
{
	struct graph *g;
	struct topo_tree *t;
	struct sched_reduced r, back = {0};
	struct bfb_stats st;
	struct verify_report rep;
	struct schedule s;
	struct arena a = {0};
	struct ofc_error err = {0};
	char *data = NULL, path[] = "/tmp/ofc-reducedXXXXXX";
	size_t len = 0;

	(void)state;
	assert_int_equal(topo_build_tree("torus:4x6", &g, &t, &err), 0);
	assert_int_equal(sched_group_of(g, t, &r.group, &err), 0);
	assert_int_equal(bfb_reduced(g, &r.group, SCHED_ALLREDUCE, NULL, &r, &st, &err), 0);
	FILE *mem = open_memstream(&data, &len);
	assert_int_equal(schedule_write_pb(&r.prog, mem, &err), 0);
	assert_int_equal(
	    schedule_append_pb(schedule_reduced_msg(&a, &r.group, sched_reduced_transfers(&r)), mem,
			       &err),
	    0);
	arena_free(&a);
	fclose(mem);
	Ofc__V1__Schedule *m = ofc__v1__schedule__unpack(NULL, len, (uint8_t *)data);
	assert_non_null(m);
	assert_non_null(m->reduced);
	assert_string_equal(m->reduced->name, "Z_4 x Z_6");
	assert_int_equal(m->reduced->n_radix, 2);
	assert_int_equal(m->reduced->order, 24);
	assert_int_equal(m->reduced->transfers, 24 * r.prog.nxfers);
	/* Rebuild the program from the message alone and expand it. */
	uint32_t radix[2] = {m->reduced->radix[0], m->reduced->radix[1]};
	assert_int_equal(radix[0] * radix[1], m->nodes);
	back.group = r.group;
	sched_init(&back.prog, SCHED_ALLREDUCE, "bfb", m->nodes);
	for (size_t k = 0; k < m->n_steps; k++) {
		sched_step(&back.prog);
		for (size_t i = 0; i < m->steps[k]->n_transfers; i++) {
			const Ofc__V1__Transfer *x = m->steps[k]->transfers[i];
			struct xfer y = {.src = (uint16_t)x->src,
					 .dst = (uint16_t)x->dst,
					 .block = x->origin,
					 .offset = sched_fix(x->offset),
					 .length = sched_fix(x->length),
					 .lane = (uint16_t)x->port};

			y.flags =
			    xfer_flags(DIR_NONE, x->op == OFC__V1__TRANSFER_OP__TRANSFER_OP_REDUCE
						     ? XFER_REDUCE
						     : XFER_COPY);
			sched_add(&back.prog, &y);
		}
	}
	assert_int_equal(sched_reduced_expand(&back, &s, &err), 0);
	assert_int_equal(sched_verify(&s, &(struct verify_opts){.graph = g}, &rep), 0);
	sched_free(&s);
	ofc__v1__schedule__free_unpacked(m, NULL);

	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	assert_int_equal(schedule_read_pb(path, &s, &err), -1);
	assert_non_null(
	    strstr(err.msg, "symmetry-reduced schedule (node 0's program x Z_4 x Z_6)"));
	unlink(path);
	free(data);
	sched_reduced_free(&back);
	sched_reduced_free(&r);
	topo_tree_free(t);
	graph_free(g);
}

/* Runs (xfer.run) go out as `arcs` and come back as they were: the
 * expanded reduced all-to-all on torus:8x8, whole, read by
 * schedule_read_pb and verified again; a run without its port, or longer
 * than a transfer crosses, is refused. */
static void write_file(char *path, const void *data, size_t len)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/* s written as protobuf (into *data, *len: the caller unpacks and frees
 * it) comes back from the file as it was, and checks out on g. */
static void round_trip(const struct schedule *s, const struct graph *g, char **data, size_t *len)
{
	struct schedule back;
	struct verify_report rep;
	struct ofc_error err = {0};
	char path[] = "/tmp/ofc-pbXXXXXX";
	FILE *mem = open_memstream(data, len);

	assert_int_equal(schedule_write_pb(s, mem, &err), 0);
	fclose(mem);
	write_file(path, *data, *len);
	assert_int_equal(schedule_read_pb(path, &back, &err), 0);
	unlink(path);
	assert_int_equal(back.nxfers, s->nxfers);
	assert_int_equal(back.nsteps, s->nsteps);
	assert_memory_equal(back.xfers, s->xfers, s->nxfers * sizeof(struct xfer));
	assert_int_equal(sched_verify(&back, &(struct verify_opts){.graph = g}, &rep), 0);
	sched_free(&back);
}

/* m, packed to a file, is refused by schedule_read_pb as no transfer it
 * can hold. */
static void assert_refused(const Ofc__V1__Schedule *m)
{
	struct schedule back;
	struct ofc_error err = {0};
	char path[] = "/tmp/ofc-badpbXXXXXX";
	size_t n = ofc__v1__schedule__get_packed_size(m);
	uint8_t *buf = malloc(n);

	ofc__v1__schedule__pack(m, buf);
	write_file(path, buf, n);
	free(buf);
	assert_int_equal(schedule_read_pb(path, &back, &err), -1);
	assert_non_null(strstr(err.msg, "is not a direct-connect transfer"));
	unlink(path);
}

static void test_schedule_pb_runs(void **state)
{
	struct graph *g;
	struct topo_tree *t;
	struct sched_reduced r;
	struct a2a_outcome o;
	struct a2a_request q = {.algo = A2A_MCF,
				.lowering = a2a_lowering_at(A2A_LOWER_PATHS),
				.mcf = {.threads = 1},
				.runs = true};
	struct schedule s;
	struct ofc_error err = {0};
	char *data = NULL;
	size_t len = 0, runs = 0;

	(void)state;
	assert_int_equal(topo_build_tree("torus:8x8", &g, &t, &err), 0);
	assert_int_equal(sched_group_of(g, t, &r.group, &err), 0);
	assert_int_equal(a2a_reduced(g, &r.group, &q, &r, &o, &err), 0);
	assert_int_equal(sched_reduced_expand(&r, &s, &err), 0);
	for (size_t k = 0; k < s.nxfers; k++)
		runs += s.xfers[k].run > 0;
	assert_true(runs > 0);
	round_trip(&s, g, &data, &len);
	/* An MSCCL program sends one link at a time. */
	struct msccl_info mi;
	char *xml = NULL;
	size_t xlen = 0;
	FILE *mem = open_memstream(&xml, &xlen);
	assert_int_equal(schedule_write_msccl(&s, MSCCL_EXECUTOR, mem, &mi, &err), -1);
	fclose(mem);
	free(xml);
	assert_non_null(strstr(err.msg, "arcs cut-through: an MSCCL program sends one link"));

	/* The first run's transfer, made bad in the message. */
	Ofc__V1__Schedule *m = ofc__v1__schedule__unpack(NULL, len, (uint8_t *)data);
	Ofc__V1__Transfer *x = NULL;
	for (size_t k = 0; k < m->n_steps && !x; k++)
		for (size_t i = 0; i < m->steps[k]->n_transfers && !x; i++)
			if (m->steps[k]->transfers[i]->has_arcs)
				x = m->steps[k]->transfers[i];
	assert_non_null(x);
	for (int bad = 0; bad < 2; bad++) {
		if (bad == 0)
			x->arcs = SCHED_MAX_RUN + 1;
		else
			x->has_port = 0;
		assert_refused(m);
		x->arcs = 2;
	}
	ofc__v1__schedule__free_unpacked(m, NULL);
	free(data);
	sched_free(&s);
	sched_reduced_free(&r);
	a2a_outcome_free(&o);
	topo_tree_free(t);
	graph_free(g);
}

/* Spans (an all-gather's transfers of 2^k blocks) go out as `blocks` and
 * come back as they were: recursive doubling relayed on torus:4x8, read by
 * schedule_read_pb and verified again; `blocks` not a power of two, 0,
 * past the last node or on another collective is refused. The MSCCL
 * program of the spans is that of their blocks one by one, byte for byte. */
static void test_schedule_pb_spans(void **state)
{
	struct graph *g;
	struct topo_tree *t;
	struct schedule s, u;
	struct ofc_error err = {0};
	char *data = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(topo_build_tree("torus:4x8", &g, &t, &err), 0);
	assert_int_equal(
	    baseline_schedule(g, t, BASELINE_RECURSIVE, SCHED_ALLGATHER, &s, NULL, &err), 0);
	assert_true(sched_has_spans(&s));
	round_trip(&s, g, &data, &len);

	char *x1 = NULL, *x2 = NULL;
	size_t l1 = 0, l2 = 0;
	struct msccl_info mi;
	sched_unspan(&s, &u);
	FILE *mem = open_memstream(&x1, &l1);
	assert_int_equal(schedule_write_msccl(&s, MSCCL_EXECUTOR, mem, &mi, &err), 0);
	fclose(mem);
	mem = open_memstream(&x2, &l2);
	assert_int_equal(schedule_write_msccl(&u, MSCCL_EXECUTOR, mem, &mi, &err), 0);
	fclose(mem);
	assert_int_equal(l1, l2);
	assert_memory_equal(x1, x2, l1);
	free(x1);
	free(x2);
	sched_free(&u);

	Ofc__V1__Schedule *m = ofc__v1__schedule__unpack(NULL, len, (uint8_t *)data);
	Ofc__V1__Transfer *x = NULL;
	for (size_t k = 0; k < m->n_steps && !x; k++)
		for (size_t i = 0; i < m->steps[k]->n_transfers && !x; i++)
			if (m->steps[k]->transfers[i]->has_blocks)
				x = m->steps[k]->transfers[i];
	assert_non_null(x);
	static const uint32_t bad[] = {3, 0, 64, 2};
	char *coll = m->collective;
	for (size_t b = 0; b < ARRAY_SIZE(bad); b++) {
		x->blocks = bad[b];
		if (b == 3) /* right, in a reduce-scatter */
			m->collective = (char *)"reduce-scatter";
		assert_refused(m);
	}
	m->collective = coll; /* freed with m, not the literal */
	ofc__v1__schedule__free_unpacked(m, NULL);
	free(data);
	sched_free(&s);
	topo_tree_free(t);
	graph_free(g);
}

/* Steps of many chunks (BFB allreduce on genkautz:256,4: 130,560
 * transfers in 8 steps, several PB_CHUNK each), streamed: the bytes are
 * those of the message tree packed whole, header and one Schedule per
 * step (what the writer once held whole), and schedule_read_pb reads
 * them back to the same transfers. A full device fails the write with
 * "short write". */
static void test_schedule_pb_chunks(void **state)
{
	struct graph *g;
	struct schedule s, back;
	struct bfb_stats st;
	struct bfb_opts bo = {0};
	struct ofc_error err = {0};
	struct arena a = {0};
	char *data = NULL, *tree = NULL, path[] = "/tmp/ofc-chunksXXXXXX";
	size_t len = 0, tlen = 0, most = 0;

	(void)state;
	assert_int_equal(topo_build("genkautz:256,4", &g, &err), 0);
	assert_int_equal(bfb_schedule(g, SCHED_ALLREDUCE, &bo, &s, &st, &err), 0);
	for (uint32_t t = 0; t < s.nsteps; t++)
		if (sched_step_size(&s, t) > most)
			most = sched_step_size(&s, t);
	assert_true(most > 2 * PB_CHUNK);
	FILE *mem = open_memstream(&data, &len);
	assert_int_equal(schedule_write_pb(&s, mem, &err), 0);
	fclose(mem);
	mem = open_memstream(&tree, &tlen);
	assert_int_equal(schedule_append_pb(schedule_header_msg(&a, &s), mem, &err), 0);
	for (uint32_t t = 0; t < s.nsteps; t++)
		assert_int_equal(schedule_append_pb(schedule_step_msg(&a, &s, t), mem, &err), 0);
	fclose(mem);
	arena_free(&a);
	assert_int_equal(len, tlen);
	assert_memory_equal(data, tree, len);

	write_file(path, data, len);
	assert_int_equal(schedule_read_pb(path, &back, &err), 0);
	unlink(path);
	assert_int_equal(back.nsteps, s.nsteps);
	assert_int_equal(back.nxfers, s.nxfers);
	assert_memory_equal(back.step_start, s.step_start, (s.nsteps + 1) * sizeof(uint32_t));
	assert_memory_equal(back.xfers, s.xfers, s.nxfers * sizeof(struct xfer));
	sched_free(&back);

	FILE *full = fopen("/dev/full", "w");
	assert_non_null(full);
	assert_int_equal(schedule_write_pb(&s, full, &err), -1);
	assert_int_equal(err.code, OFC_E_RUNTIME);
	assert_string_equal(err.msg, "short write");
	fclose(full);
	free(tree);
	free(data);
	sched_free(&s);
	graph_free(g);
}

/* The reader in two passes: a BFB all-gather on torus:4x4 and
 * 200,000 empty steps after it (2 bytes each in the file, where protobuf-c
 * held 56 each) are counted before anything is built, and decode to the
 * schedule with its steps reserved to the count; the file is refused when
 * holding it would pass the memory limit, and past the deadline; bytes
 * that break the wire format are refused with their byte. */
static void test_schedule_pb_counted(void **state)
{
	const uint32_t k = 200000;
	struct graph *g;
	struct schedule s, back;
	struct bfb_stats st;
	struct bfb_opts bo = {0};
	struct ofc_error err = {0};
	struct schedule_pb f;
	char *data = NULL, path[] = "/tmp/ofc-countedXXXXXX";
	size_t len = 0, most = 0;

	(void)state;
	assert_int_equal(topo_build("torus:4x4", &g, &err), 0);
	assert_int_equal(bfb_schedule(g, SCHED_ALLGATHER, &bo, &s, &st, &err), 0);
	for (uint32_t t = 0; t < s.nsteps; t++)
		most = sched_step_size(&s, t) > most ? sched_step_size(&s, t) : most;
	FILE *mem = open_memstream(&data, &len);
	assert_int_equal(schedule_write_pb(&s, mem, &err), 0);
	for (uint32_t i = 0; i < k; i++)
		fwrite("\x32\x00", 1, 2, mem); /* Schedule.steps: an empty Step */
	fclose(mem);
	write_file(path, data, len);

	assert_int_equal(schedule_pb_open(path, 0, NULL, &f, &err), 0);
	assert_int_equal(f.nsteps, s.nsteps + k);
	assert_int_equal(f.nxfers, s.nxfers);
	assert_int_equal(f.max_step_xfers, most);
	assert_int_equal(f.nodes, 16);
	assert_int_equal(f.collective, SCHED_ALLGATHER);
	assert_int_equal(schedule_pb_bytes(&f),
			 (s.nsteps + k + 1) * sizeof(uint32_t) + s.nxfers * sizeof(struct xfer));
	assert_int_equal(schedule_pb_decode(&f, NULL, &back, &err), 0);
	schedule_pb_close(&f);
	assert_int_equal(back.nsteps, s.nsteps + k);
	assert_int_equal(back.cap_steps, back.nsteps);
	assert_int_equal(back.nxfers, s.nxfers);
	assert_memory_equal(back.xfers, s.xfers, s.nxfers * sizeof(struct xfer));
	assert_int_equal(back.step_start[back.nsteps], s.nxfers);
	sched_free(&back);

	/* Holding the file would pass the limit: refused before reading. */
	assert_int_equal(schedule_pb_open(path, mem_held() + len / 2, NULL, &f, &err), -1);
	assert_int_equal(err.code, OFC_E_RUNTIME);
	assert_string_equal(err.file, path);
	assert_non_null(strstr(err.msg, "reading it would take the process over the memory limit"));

	/* A deadline already past stops the count. */
	struct ofc_clock late = {.start = now_seconds() - 2, .limit = 1};
	late.deadline = late.start + 1;
	assert_int_equal(schedule_pb_open(path, 0, &late, &f, &err), -1);
	assert_string_equal(err.msg, "time limit 1 s reached in reading the schedule");
	unlink(path);

	/* Cut inside the last step; a group (wire type 3); a transfer that is a
	 * varint; a transfer whose bytes are no Transfer (a varint cut short). */
	static const struct {
		const char *bytes;
		size_t len;
		const char *msg;
	} bad[] = {
	    {"\x32\x05\x0a\x01", 4, "not an ofc.v1.Schedule message (byte 0: a truncated field)"},
	    {"\x1b", 1, "not an ofc.v1.Schedule message (byte 0: a truncated field)"},
	    {"\x32\x02\x08\x01", 4,
	     "not an ofc.v1.Schedule message (byte 2: a transfer that is not a message)"},
	    {"\x0a\x09"
	     "allgather\x18\x04\x32\x03\x0a\x01\x08",
	     18, "step 1, transfer 1: not an ofc.v1.Transfer message"},
	    /* offset 0.75 and length 0.5: each within [0, 1], the part past
	     * its block (the MSCCL writer read past its buffer) */
	    {"\x0a\x09"
	     "allgather\x18\x04\x32\x1a\x0a\x18\x08\x00\x10\x01\x18\x00\x21\x00\x00\x00\x00"
	     "\x00\x00\xe8\x3f\x29\x00\x00\x00\x00\x00\x00\xe0\x3f",
	     41,
	     "step 1, transfer 1 is not a direct-connect transfer between the schedule's 4 nodes"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = (struct ofc_error){0};
		if (schedule_pb_parse("bad.pb", (const uint8_t *)bad[i].bytes, bad[i].len, NULL, &f,
				      &err) == 0) {
			assert_int_equal(schedule_pb_decode(&f, NULL, &back, &err), -1);
			schedule_pb_close(&f);
		}
		assert_string_equal(err.file, "bad.pb");
		assert_string_equal(err.msg, bad[i].msg);
	}
	/* The file cut short in its last step: the step's field is truncated. */
	char cut[] = "/tmp/ofc-cutXXXXXX";
	write_file(cut, data, len - 1);
	assert_int_equal(schedule_read_pb(cut, &back, &err), -1);
	assert_string_equal(err.file, cut);
	char want[96];
	snprintf(want, sizeof(want), "not an ofc.v1.Schedule message (byte %zu: a truncated field)",
		 len - 2);
	assert_string_equal(err.msg, want);
	unlink(cut);
	free(data);
	sched_free(&s);
	graph_free(g);
}

/* The MSCCL writer on what a file may hold and the verifier would refuse
 * (fuzz_schedule_pb found it reading past its buffers): an all-to-all whose
 * rank 0 relays a block it never receives is refused by name. */
static void test_msccl_refuses_unheld(void **state)
{
	struct schedule s;
	struct msccl_info mi;
	struct ofc_error err = {0};
	struct xfer x = {.src = 0,
			 .dst = 2,
			 .block = 1 * 4 + 2,
			 .length = SCHED_ONE,
			 .lane = SCHED_NO_LANE,
			 .flags = xfer_flags(DIR_NONE, XFER_COPY)};
	FILE *null = fopen("/dev/null", "w");

	(void)state;
	sched_init(&s, SCHED_ALLTOALL, "stray", 4);
	sched_step(&s);
	sched_add(&s, &x);
	assert_int_equal(schedule_write_msccl(&s, MSCCL_EXECUTOR, null, &mi, &err), -1);
	assert_string_equal(err.msg, "transfer 0: rank 0 sends block 6, which it never holds");
	fclose(null);
	sched_free(&s);
}

/* A link with more operations than one thread block may run is spread
 * over channels (the k-th send still meets the k-th receive on each): 64
 * steps a thread block for msccl-executor-nccl, 256 for the legacy MSCCL;
 * past MSCCL's 32 channels the writer says by how much and which options
 * would fit it. */
static void test_msccl_spreads_channels(void **state)
{
	struct schedule s;
	struct msccl_info mi;
	struct ofc_error err = {0};
	FILE *null = fopen("/dev/null", "w");

	(void)state;
	for (int over = 0; over < 2; over++) {
		/* 2 ranks, a step per transfer of block 0 -> 1: 600 (spread 3)
		 * or 9000 (over 32 x 256) operations on the one link */
		uint32_t steps = over ? 9000 : 600;

		sched_init(&s, SCHED_ALLTOALL, "many", 2);
		for (uint32_t t = 0; t < steps; t++) {
			struct xfer x = {.src = 0,
					 .dst = 1,
					 .block = 0 * 2 + 1,
					 .length = SCHED_ONE,
					 .lane = SCHED_NO_LANE,
					 .flags = xfer_flags(DIR_NONE, XFER_COPY)};

			sched_step(&s);
			sched_add(&s, &x);
			x = (struct xfer){.src = 1,
					  .dst = 0,
					  .block = 1 * 2 + 0,
					  .length = SCHED_ONE,
					  .lane = SCHED_NO_LANE,
					  .flags = xfer_flags(DIR_NONE, XFER_COPY)};
			sched_add(&s, &x);
		}
		if (!over) {
			assert_int_equal(schedule_write_msccl(&s, MSCCL_LEGACY, null, &mi, &err),
					 0);
			assert_int_equal(mi.channels, 3);
			/* per rank: the copies' block, a send and a receive block
			 * a channel */
			assert_int_equal(mi.thread_blocks, 2 * (1 + 2 * 3));
			assert_int_equal(schedule_write_msccl(&s, MSCCL_EXECUTOR, null, &mi, &err),
					 0);
			assert_int_equal(mi.channels, 10); /* 600 / 64 */
			assert_int_equal(mi.thread_blocks, 2 * (1 + 2 * 10));
		} else {
			assert_int_equal(schedule_write_msccl(&s, MSCCL_LEGACY, null, &mi, &err),
					 -1);
			assert_non_null(strstr(err.msg,
					       "has 9000 operations on 1 channel, 8744 over the "
					       "legacy MSCCL's 256 (MSCCL_MAX_NUM_STEPS), and 32 "
					       "channels are MSCCL's most: fewer chunks "
					       "(--chunks), or --lowering paths or --lowering "
					       "single"));
		}
		sched_free(&s);
	}
	fclose(null);
}

/* A rank whose program is more XML nodes than the runtime's parser reads
 * (its <tb> and <step> elements, the <algo> and every <gpu>: fewer than
 * MAX_NODES, 4,096) is refused, the limit and the excess named: 8 ranks,
 * every pair both ways in each of 300 steps, 4,200 operations a rank. */
static void test_msccl_node_limit(void **state)
{
	struct schedule s;
	struct msccl_info mi;
	struct ofc_error err = {0};
	FILE *null = fopen("/dev/null", "w");

	(void)state;
	for (uint32_t steps = 200; steps <= 300; steps += 100) {
		sched_init(&s, SCHED_ALLTOALL, "nodes", 8);
		for (uint32_t t = 0; t < steps; t++) {
			sched_step(&s);
			for (uint32_t u = 0; u < 8; u++)
				for (uint32_t v = 0; v < 8; v++) {
					struct xfer x = {.src = u,
							 .dst = v,
							 .block = u * 8 + v,
							 .length = SCHED_ONE,
							 .lane = SCHED_NO_LANE,
							 .flags = xfer_flags(DIR_NONE, XFER_COPY)};

					if (u != v)
						sched_add(&s, &x);
				}
		}
		int rc = schedule_write_msccl(&s, MSCCL_EXECUTOR, null, &mi, &err);
		if (steps == 200) { /* 2,800 operations: within */
			assert_int_equal(rc, 0);
			assert_true(mi.most_nodes > 2800 && mi.most_nodes <= 4095);
		} else {
			assert_int_equal(rc, -1);
			assert_non_null(strstr(err.msg, "XML nodes"));
			assert_non_null(strstr(err.msg, "over the 4095 msccl-executor-nccl's "
							"parser reads for a rank (MAX_NODES 4096): "
							"--lowering paths"));
		}
		sched_free(&s);
	}
	fclose(null);
}

static void test_json_and_text(void **state)
{
	struct fabric *f = load();
	struct ofc_error err = {0};
	char *data = NULL;
	size_t len = 0;

	(void)state;
	FILE *mem = open_memstream(&data, &len);
	assert_int_equal(fabric_write_json(f, mem, &err), 0);
	fclose(mem);
	assert_non_null(strstr(data, "\"name\": \"xfab\""));
	assert_non_null(strstr(data, "\"spec\": \"torus:4x4\""));
	assert_non_null(strstr(data, "\"op\": \"COLLECTIVE_OP_ALLREDUCE\""));
	assert_non_null(strstr(data, "\"size_bytes\": 1048576"));
	free(data);

	data = NULL;
	mem = open_memstream(&data, &len);
	fabric_write_text(f, mem);
	fclose(mem);
	assert_non_null(strstr(data, "fabric xfab (x.yaml)\n  sixteen hosts\n"));
	assert_non_null(strstr(data, "hosts: 16 (h0..h15), 4 ports each\n"));
	assert_non_null(strstr(data, "optical circuit switch ocs0: 64 x 64 ports"));
	assert_non_null(strstr(data, "topology torus:4x4: 16 nodes, degree 4, 64 links"));
	assert_non_null(strstr(data, "circuits: 64; 64 on ocs0\n"));
	assert_non_null(strstr(data, "allreduce of 1 MiB per node"));
	free(data);
	fabric_free(f);
}

/* A schedule's summary (summary.c): the message's fields in its order, its
 * metrics as members, empty lists left out at every depth, no steps, links
 * or vertices, and the detail's fields after them; pb_write_json of the
 * same message keeps every list, empty ones too. */
static void test_summary_json(void **state)
{
	Ofc__V1__Schedule m = OFC__V1__SCHEDULE__INIT;
	Ofc__V1__Step st = OFC__V1__STEP__INIT, *stp = &st;
	Ofc__V1__Schedule__MetricsEntry e = OFC__V1__SCHEDULE__METRICS_ENTRY__INIT, *ep = &e;
	Ofc__V1__ReducedGroup g = OFC__V1__REDUCED_GROUP__INIT;
	Ofc__V1__ScheduleDetail d = OFC__V1__SCHEDULE_DETAIL__INIT;
	Ofc__V1__DirectDetail dd = OFC__V1__DIRECT_DETAIL__INIT;
	Ofc__V1__DirectMcf mcf = OFC__V1__DIRECT_MCF__INIT;
	uint32_t radix[] = {2, 2};
	struct json_writer w;
	char *data = NULL;
	size_t len = 0;
	FILE *mem;

	(void)state;
	m.collective = "allgather";
	m.has_nodes = 1;
	m.nodes = 4;
	m.n_steps = 1;
	m.steps = &stp;
	e.key = "tau_l";
	e.has_value = 1;
	e.value = 3;
	m.n_metrics = 1;
	m.metrics = &ep;
	g.name = "Z_2^2";
	g.n_radix = 2;
	g.radix = radix;
	m.reduced = &g;
	m.has_num_transfers = 1;
	m.num_transfers = 12;
	mcf.method = "one-source symmetric";
	dd.has_generate_s = 1;
	dd.generate_s = 0.5;
	dd.mcf = &mcf;
	d.direct = &dd;
	m.detail = &d;

	mem = open_memstream(&data, &len);
	jw_init(&w, mem, false);
	schedule_summary_json(&w, &m);
	jw_finish(&w);
	fclose(mem);
	assert_string_equal(data, "{\"collective\":\"allgather\",\"nodes\":4,\"tau_l\":3,"
				  "\"reduced\":{\"name\":\"Z_2^2\",\"radix\":[2,2]},"
				  "\"num_transfers\":12,\"generate_s\":0.5,"
				  "\"mcf\":{\"method\":\"one-source symmetric\"}}\n");
	free(data);

	data = NULL;
	mem = open_memstream(&data, &len);
	jw_init(&w, mem, false);
	pb_write_json(&w, &m.base);
	jw_finish(&w);
	fclose(mem);
	assert_non_null(strstr(data, "\"failed_nodes\":[]"));
	assert_non_null(strstr(data, "\"metrics\":{\"tau_l\":3}"));
	assert_non_null(strstr(data, "\"step\":[]"));
	assert_non_null(strstr(data, "\"detail\":{\"direct\":{\"failed_hosts\":[],"));
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fabric_pb),
	    cmocka_unit_test(test_topology_pb),
	    cmocka_unit_test(test_schedule_pb_streamed),
	    cmocka_unit_test(test_schedule_pb_reduced),
	    cmocka_unit_test(test_schedule_pb_runs),
	    cmocka_unit_test(test_schedule_pb_spans),
	    cmocka_unit_test(test_schedule_pb_chunks),
	    cmocka_unit_test(test_schedule_pb_counted),
	    cmocka_unit_test(test_msccl_refuses_unheld),
	    cmocka_unit_test(test_msccl_spreads_channels),
	    cmocka_unit_test(test_msccl_node_limit),
	    cmocka_unit_test(test_json_and_text),
	    cmocka_unit_test(test_summary_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
