/* util — errors, growable strings, a JSON writer, base64, unit parsing, atomic files,
 * a parallel-for. The bottom of the module stack: depends on libc only.
 *
 * Allocation failure ends the process (xmalloc and friends), as in git and
 * Redis: every caller would otherwise have to unwind a state that cannot be
 * reported anyway. The CLI's hook (mem_on_oom) says what the request needed
 * at least and exits 1; without a hook it aborts. Everything else reports through struct ofc_error
 * and never prints.
 */
#ifndef OFC_UTIL_H
#define OFC_UTIL_H

/* The release, from the VERSION file (the Makefile passes it); every binary
 * prints it for --version. */
#ifndef OFC_VERSION
#define OFC_VERSION "unknown"
#endif

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__)
#define OFC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define OFC_PRINTF(f, a)
#endif

/* ---- errors ----------------------------------------------------------- */

enum ofc_errcode {
	OFC_OK = 0,
	OFC_E_INPUT,   /* bad input: config, spec, demand file, frame (exit 2) */
	OFC_E_USAGE,   /* command-line usage (exit 2) */
	OFC_E_RUNTIME, /* I/O, device, solver, timeout (exit 1) */
};

/* Why a device or a peer failed, for decisions (retry or not) and for
 * people who must not see the device's own words (read-only clients): a
 * fixed vocabulary, independent of the message text. */
enum ofc_reason {
	OFC_R_NONE = 0,
	OFC_R_TIMEOUT,	   /* no answer before the deadline */
	OFC_R_CLOSED,	   /* the peer closed the connection */
	OFC_R_LOST,	   /* cannot connect, or the connection broke */
	OFC_R_AUTH,	   /* login or hello refused */
	OFC_R_IDENTITY,	   /* the device is not the one the config describes */
	OFC_R_REFUSED,	   /* the device refused a command */
	OFC_R_GARBAGE,	   /* what came back is not the protocol */
	OFC_R_TOO_BIG,	   /* a frame or reply over its limit */
	OFC_R_MISMATCH,	   /* read-back differs from what was applied */
	OFC_R_CREDENTIALS, /* the credentials file is unusable */
	OFC_R_FENCED,	   /* not sent: this controller may not act any more */
};

struct ofc_error {
	enum ofc_errcode code;
	enum ofc_reason reason; /* OFC_R_NONE unless a device or peer failed */
	char file[256];		/* input the error is in; "" when none */
	unsigned line;		/* 1-based; 0 when the input has no position */
	unsigned col;
	char msg[512];
};

void ofc_error_clear(struct ofc_error *err);
/* Both return -1 so callers can write `return ofc_error_set(...)`. */
int ofc_error_set(struct ofc_error *err, enum ofc_errcode code, const char *fmt, ...)
    OFC_PRINTF(3, 4);
int ofc_error_at(struct ofc_error *err, enum ofc_errcode code, const char *file, unsigned line,
		 unsigned col, const char *fmt, ...) OFC_PRINTF(6, 7);
/* "FILE:LINE:COL: msg", "FILE: msg" or "msg", into buf. Returns buf. */
const char *ofc_error_str(const struct ofc_error *err, char *buf, size_t n);
/* ofc_error_set with a reason. */
int ofc_error_setr(struct ofc_error *err, enum ofc_errcode code, enum ofc_reason reason,
		   const char *fmt, ...) OFC_PRINTF(4, 5);
/* "timeout", "closed", ...; "" for OFC_R_NONE. */
const char *ofc_reason_name(enum ofc_reason r);
/* Exit status for a main: 2 for input and usage errors, 1 otherwise. */
int ofc_error_exit_code(const struct ofc_error *err);
/* Prefix the message with "what: " (keeps position). */
void ofc_error_prefix(struct ofc_error *err, const char *fmt, ...) OFC_PRINTF(2, 3);

/* ---- memory ----------------------------------------------------------- */

/* What happens when an allocation fails: fn (which must not return; the
 * CLI's says what the request needed and exits 1), else a message and
 * abort(). mem_oom is that failure, for allocators of their own. */
void mem_on_oom(void (*fn)(size_t asked));
void mem_oom(size_t asked) __attribute__((noreturn));
/* Resident bytes of this process (without allocating; 0 when unknown) and
 * the machine's physical memory. */
uint64_t mem_resident(void);
uint64_t mem_physical(void);
/* Resident bytes beyond what the program held when it was loaded: what
 * --max-memory and --max-request-memory count with a request's estimate. */
uint64_t mem_held(void);

/* glibc's allocator tuned for the engines (one arena, freed memory kept
 * for the next allocation): ofc's and ofc-planner's first call. */
void mem_tune_for_engines(void);
void *xmalloc(size_t n);
void *xmalloc_huge(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* realloc to n * size, aborting on multiplication overflow. */
void *xreallocarray(void *p, size_t n, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) OFC_PRINTF(1, 2);

/* Grow *arr (of *cap elements of size sz) so that it holds at least need. */
void grow_array(void **arr, size_t *cap, size_t need, size_t sz);
#define GROW(arr, cap, need) grow_array((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* ---- arena -------------------------------------------------------------
 * Many small allocations freed together (protobuf messages being built,
 * per-request scratch). Memory is zeroed. */
struct arena_block;
struct arena {
	struct arena_block *head;
};
void *arena_alloc(struct arena *a, size_t n);
/* n elements of size sz, checked for overflow. */
void *arena_array(struct arena *a, size_t n, size_t sz);
char *arena_strdup(struct arena *a, const char *s);
char *arena_printf(struct arena *a, const char *fmt, ...) OFC_PRINTF(2, 3);
void arena_free(struct arena *a);

/* ---- strbuf ----------------------------------------------------------- */

struct strbuf {
	char *buf; /* always NUL-terminated once anything was added */
	size_t len;
	size_t cap;
};
#define STRBUF_INIT                                                                                \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

void sb_add(struct strbuf *sb, const char *s, size_t n);
void sb_puts(struct strbuf *sb, const char *s);
void sb_putc(struct strbuf *sb, char c);
void sb_printf(struct strbuf *sb, const char *fmt, ...) OFC_PRINTF(2, 3);
void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap);
void sb_reset(struct strbuf *sb);
void sb_free(struct strbuf *sb);
/* Hand the buffer to the caller (who frees it); sb is reset. Never NULL. */
char *sb_detach(struct strbuf *sb);

/* ---- base64 (RFC 4648) -------------------------------------------------- */

/* Standard alphabet, padded; NUL-terminated, the caller frees it. */
char *b64_encode(const void *data, size_t len);
/* s[0..n) into *out (NUL-terminated beyond *len, the caller frees it): 0,
 * or -1 for anything an encoder would not write (other characters,
 * whitespace, bits left over, padding misplaced). Padding is required
 * unless B64_UNPADDED; '-' and '_' for '+' and '/' with B64_URL_SAFE. */
enum { B64_URL_SAFE = 1, B64_UNPADDED = 2 };
int b64_decode(const char *s, size_t n, unsigned flags, uint8_t **out, size_t *len);

/* ---- JSON writer -------------------------------------------------------
 * Streams to a FILE. Commas and indentation are automatic. Pretty mode puts
 * each object member and each container element of an array on its own
 * line, and keeps arrays of scalars on one line ([0, 1]).
 */
#define JSON_MAX_DEPTH 32

struct json_level {
	bool is_array;
	bool multiline; /* an array that holds containers */
	unsigned count;
};

#define JSON_TOP_KEYS 128

struct json_writer {
	FILE *out;
	bool pretty;
	bool after_key;
	int depth;
	struct json_level level[JSON_MAX_DEPTH];
	/* The first JSON_TOP_KEYS keys of the outermost object, hashed: a
	 * printer that adds the fields a message has and it did not print
	 * asks jw_wrote_key (one shape of a schedule's summary). */
	uint64_t top[JSON_TOP_KEYS];
	unsigned ntop;
};

void jw_init(struct json_writer *w, FILE *out, bool pretty);
void jw_obj_begin(struct json_writer *w);
void jw_obj_end(struct json_writer *w);
void jw_arr_begin(struct json_writer *w);
void jw_arr_end(struct json_writer *w);
void jw_key(struct json_writer *w, const char *key);
/* Whether the outermost object has the key already (among its first
 * JSON_TOP_KEYS keys). */
bool jw_wrote_key(const struct json_writer *w, const char *key);
void jw_str(struct json_writer *w, const char *s);
void jw_int(struct json_writer *w, int64_t v);
void jw_uint(struct json_writer *w, uint64_t v);
/* Shortest text that reads back as the same double; null when not finite. */
void jw_double(struct json_writer *w, double v);
void jw_bool(struct json_writer *w, bool v);
void jw_null(struct json_writer *w);
/* Ends the document with a newline. */
void jw_finish(struct json_writer *w);
/* Escape s as a JSON string (with quotes) into sb. */
void json_escape(struct strbuf *sb, const char *s);

/* ---- units -------------------------------------------------------------
 * Numbers as people write them: "64MiB", "4MB", "128" (bytes); "40Gbps",
 * "100Gb/s", "12.5GB/s"; "25us", "10ms", "1.5s", "30" (seconds). Negative values, missing
 * numbers, unknown units and overflow are errors; *why then points to a
 * static explanation suitable for an error message.
 */
int parse_size(const char *s, uint64_t *bytes, const char **why);
int parse_rate(const char *s, double *bits_per_s, const char **why);
int parse_duration(const char *s, double *seconds, const char **why);
/* Unsigned decimal integer, all of s, no sign, no overflow. */
int parse_u64(const char *s, uint64_t *v);
int parse_u32(const char *s, uint32_t *v);
/* Formatting for people: "64 MiB", "40 Gb/s", "25 us". */
void fmt_size(char *buf, size_t n, uint64_t bytes);
void fmt_rate(char *buf, size_t n, double bits_per_s);
void fmt_duration(char *buf, size_t n, double seconds);
/* ... and past 10 minutes in minutes, hours or days ("5.3 h"). */
void fmt_duration_long(char *buf, size_t n, double seconds);

/* ---- command-line options (opts.c) --------------------------------------
 * A program's options as one table, as the YAML loader's keys are
 * (controller/config/loader.h): a row per option with its long name, the
 * field it fills (offsetof into the caller's struct), a typed parser, the
 * range and the help. One loop (opt_parse, getopt_long built from the
 * table) reads any table; the usage and --help (and through --help the man
 * page, scripts/man.py) are written from it (opt_usage, opt_help). A value
 * out of range is refused as "--NAME 'VALUE': EXPECT" (OFC_E_USAGE). */
struct opt;
/* Fill the row's field of base from arg (NULL for a flag); 0, or -1 with
 * err: OFC_E_USAGE (the main adds its usage), OFC_E_INPUT (bad, exit 2,
 * no usage) or OFC_E_RUNTIME (exit 1). */
typedef int (*opt_parse_fn)(const struct opt *row, const char *arg, void *base,
			    struct ofc_error *err);
enum {
	OPT_REQUIRED = 1,   /* shown without brackets in the usage */
	OPT_REPEAT = 2,	    /* may be given again: "[--NAME ARG]..." */
	OPT_STOP = 4,	    /* --help, --version: opt_parse stops and returns 1 */
	OPT_HIDE_USAGE = 8, /* in --help only (its usage is another row's) */
	OPT_SHORT = 16,	    /* usage and help name it by its letter (-o OUT) */
	OPT_OPTIONAL = 32,  /* its value may be left out: --NAME[=ARG], the parser given NULL */
	OPT_OPERAND = 64,   /* no option: an operand's words in the usage (its name as is),
			     * so that it can stand among the options (in an alternative,
			     * or last: "-- PROGRAM"); read by no parser, in no --help */
};
struct opt_choice {
	const char *name;
	int value;
};
struct opt {
	const char *name;   /* without "--" */
	opt_parse_fn parse; /* NULL: a flag, true into the bool at off */
	size_t off;	    /* the field in base */
	const char *arg;    /* the value's placeholder (FILE, DUR); NULL: no value */
	const char *help;   /* one paragraph, wrapped by opt_help */
	double min, max;    /* the numeric parsers' range */
	const char *expect; /* after "--NAME 'VALUE': " when the value is refused */
	unsigned flags;
	char letter;			  /* a short option too (-h); 0: none */
	const struct opt_choice *choices; /* opt_choice's, ending with a NULL name */
	/* The usage's shape, which the command's checks keep: a row with
	 * under (another row's name) is shown inside that row's item,
	 * bracketed unless OPT_REQUIRED ("[--max-loss P% [--grace DUR]]",
	 * "[--format F -o OUT]"); the rows at one level with the same alt
	 * above 0 are one item, "(A | B)" when one of them is OPT_REQUIRED
	 * (one of them must be given), else "[A | B]" (at most one). */
	const char *under;
	unsigned char alt;
};
/* Parse argv with table (ending with a NULL name) into base: 0 when all
 * were read, 1 when an OPT_STOP row was given (*stop names it), -1 with
 * err (OFC_E_USAGE: an unknown option, a missing or a refused value, an
 * argument that is no option). Uses getopt_long (not reentrant). */
int opt_parse(const struct opt *table, int argc, char **argv, void *base, const struct opt **stop,
	      struct ofc_error *err);
/* The same for a program that takes operands: those that are no option
 * are moved to the end (getopt's order), the first at *first. */
int opt_parse_args(const struct opt *table, int argc, char **argv, void *base,
		   const struct opt **stop, int *first, struct ofc_error *err);
/* The same, calling given after each row taken (not the OPT_STOP ones):
 * for a caller whose fields have a "was given" beside them that the
 * parser cannot know of (a protobuf message's has_ flags). */
typedef void (*opt_given_fn)(const struct opt *row, void *base);
int opt_parse_given(const struct opt *table, int argc, char **argv, void *base,
		    const struct opt **stop, int *first, opt_given_fn given, struct ofc_error *err);
/* The rows' usage into buf ("--config FILE [--device NAME=HOST:PORT]...
 * (--port P=IFNAME... | --testbed-ports N)"), after what buf holds up to
 * *k: in table order, or the required items first (required_first). An
 * OPT_REPEAT row ends with "...". The text is cut at n. */
void opt_usage_text(char *buf, size_t n, size_t *k, const struct opt *table, bool required_first);
/* lead ("usage: PROG ") and text wrapped before 80 columns at the spaces
 * outside brackets ("|" kept with the word after it), the lines after the
 * first as deep as lead; an item too long for a line is broken before its
 * inner options, brackets and bars. */
void opt_usage_put(FILE *f, const char *lead, const char *text);
/* "usage: PROG " and the rows wrapped under it, then "| --help | --version"
 * (the OPT_STOP rows): required items first, then the others in order. */
void opt_usage(FILE *f, const char *prog, const struct opt *table);
/* Each row: "  --NAME ARG" and its help from column 27 (or two spaces after
 * a longer name), wrapped at 79 columns; continuation lines as deep as the
 * help's first, so scripts/man.py joins them. An OPT_REPEAT row's help
 * ends with "(repeatable)" unless its words say so already. */
void opt_help(FILE *f, const struct opt *table);
/* The generic parsers: strings (argv's, not copied), unsigned integers
 * (uint32_t), sizes (uint64_t; opt_size32: uint32_t), durations in seconds
 * (double; opt_seconds_or_0: 0 besides the range; opt_seconds_none: 0
 * stored as -1, "none"), durations in whole milliseconds (uint32_t), octal
 * modes (unsigned, at most max) and choices (int, from row->choices). */
int opt_str(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
int opt_u32(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
int opt_size(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
int opt_size32(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
int opt_seconds(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
int opt_seconds_or_0(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
int opt_seconds_none(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
int opt_ms(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
int opt_octal(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
int opt_choice(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
/* "--NAME 'VALUE': " and fmt, OFC_E_USAGE: for a table's own parsers. */
int opt_refuse(const struct opt *row, const char *arg, struct ofc_error *err, const char *fmt, ...)
    OFC_PRINTF(4, 5);

/* ---- files ------------------------------------------------------------- */

/* Read a whole regular file (at most max bytes) into a NUL-terminated
 * buffer; "-" is stdin. A FIFO, device or directory is refused without
 * blocking (file_open_regular). Errors are OFC_E_INPUT naming the path. */
int read_file(const char *path, size_t max, char **data, size_t *len, struct ofc_error *err);
/* Open path (relative to dirfd, or AT_FDCWD) for reading with O_NONBLOCK,
 * O_CLOEXEC and `flags` (e.g. O_NOFOLLOW), and check that what was opened
 * is a regular file. Returns the fd, or -1 with err set. */
int file_open_regular(int dirfd, const char *path, int flags, struct ofc_error *err);
/* Read fd to its end (at most max bytes; name for messages). A buffer that
 * ran over the limit is wiped before it is freed (it may hold a secret). */
int read_fd(int fd, const char *name, size_t max, char **data, size_t *len, struct ofc_error *err);

/* A square matrix of non-negative numbers from text (util/matrix.c): N
 * lines of N numbers (spaces, tabs or commas between them; blank lines and
 * '#' comments skipped), N <= max_n, into *out (N x N, row by row; the
 * caller frees). Errors at NAME:LINE:COL (OFC_E_INPUT). */
int matrix_parse(const char *name, const char *text, size_t len, uint32_t max_n, double **out,
		 uint32_t *n, struct ofc_error *err);
int matrix_read(const char *path, uint32_t max_n, double **out, uint32_t *n, struct ofc_error *err);

/* Output that appears all at once or not at all: written to PATH.tmp.XXXXXX
 * in the same directory, flushed, fsynced, renamed over PATH, and the
 * directory fsynced. Path "-" writes to stdout directly. */
struct atomic_file {
	FILE *f;
	char *path;
	char *tmp; /* NULL for stdout */
};
int atomic_open(struct atomic_file *af, const char *path, struct ofc_error *err);
int atomic_commit(struct atomic_file *af, struct ofc_error *err);
/* Drop the temporary file; safe after a failed commit and on a closed af. */
void atomic_abort(struct atomic_file *af);
/* Write one buffer atomically. */
int atomic_write(const char *path, const void *data, size_t len, struct ofc_error *err);

/* ---- parallel loops ----------------------------------------------------
 * Run fn(ctx, i, worker) for i in [0, n) on `threads` threads (0 =
 * ofc_cpu_count(): the CPUs the process may run on, its affinity mask). Items are handed out in
 * blocks of `grain`. worker is in [0, threads) so callers can keep per-thread scratch space: as
 * many as parallel_workers(n, grain, threads) says (at most PARALLEL_MAX, at most one per block, at
 * least 1).
 */
#define PARALLEL_MAX 64
unsigned ofc_cpu_count(void);
/* The calling thread named (at most 15 characters: /proc/PID/task/TID/comm,
 * ps -L, gdb), so a daemon's threads are told apart by what runs them. */
void ofc_thread_name(const char *name);
unsigned parallel_workers(size_t n, size_t grain, unsigned threads);
void parallel_for(size_t n, size_t grain, unsigned threads,
		  void (*fn)(void *ctx, size_t i, unsigned worker), void *ctx);

/* ---- descriptors and frames (util/frame.c) -------------------------------
 * Blocking I/O on a non-blocking or blocking fd, bounded by an absolute
 * deadline on the now_seconds() clock (0: no deadline, for waits a person
 * chose, such as `ofc watch`). Errors are OFC_E_RUNTIME with a reason:
 * OFC_R_TIMEOUT, OFC_R_CLOSED (end of stream where bytes were due),
 * OFC_R_LOST (any other socket error), OFC_R_TOO_BIG.
 *
 * A frame is a 4-byte big-endian length and that many bytes: ofcd's
 * control socket and the MRR ring agents speak it. */
int fd_write_all(int fd, const void *buf, size_t n, double deadline, struct ofc_error *err);
/* At most n bytes: the count, 0 at end of stream, -1 with err set. */
long fd_read_some(int fd, void *buf, size_t n, double deadline, struct ofc_error *err);
int fd_read_exact(int fd, void *buf, size_t n, double deadline, struct ofc_error *err);

void frame_len_put(uint8_t h[4], uint32_t n);
uint32_t frame_len_get(const uint8_t h[4]);
/* One frame of len bytes (len <= max). */
int frame_send(int fd, const void *msg, size_t len, size_t max, double deadline,
	       struct ofc_error *err);
/* One frame into *buf (grown as needed, one spare byte); *len its size.
 * A length over max is OFC_R_TOO_BIG and nothing more is read. */
int frame_recv(int fd, uint8_t **buf, size_t *cap, size_t *len, size_t max, double deadline,
	       struct ofc_error *err);

/* ---- misc -------------------------------------------------------------- */

/* src[0..len) made fit to quote in a message: bytes outside 0x20..0x7e
 * (escape sequences, NUL) as \xNN and a backslash as \\, at most max bytes
 * of src with "..." after when cut. dst (n bytes) always ends in NUL.
 * Returns dst. */
const char *str_printable(char *dst, size_t n, const char *src, size_t len, size_t max);

/* The bits set in w: a few shifts and adds, where __builtin_popcountll is
 * a call into libgcc unless ARCH gives a -march with the instruction (1%
 * of the patch check's answer at 8,192 nodes). */
static inline uint32_t popcount64(uint64_t w)
{
	w -= (w >> 1) & UINT64_C(0x5555555555555555);
	w = (w & UINT64_C(0x3333333333333333)) + ((w >> 2) & UINT64_C(0x3333333333333333));
	w = (w + (w >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
	return (uint32_t)((w * UINT64_C(0x0101010101010101)) >> 56);
}

/* Greatest common divisor (gcd(0, 0) = 0). */
uint64_t gcd_u64(uint64_t a, uint64_t b);
/* ceil(a / b) for b > 0, without overflow for any a. */
uint64_t ceil_div_u64(uint64_t a, uint64_t b);
/* Levenshtein distance, for "did you mean" hints; capped at 255. */
unsigned edit_distance(const char *a, const char *b);
/* Monotonic clock in seconds. */
double now_seconds(void);
/* Wall-clock milliseconds since the epoch (records, events). */
uint64_t unix_ms(void);
/* Peak resident set size of this process in bytes (0 when unknown). */
uint64_t peak_rss_bytes(void);
/* $env where set and not empty, else file in the running program's folder
 * (/proc/self/exe's); NULL when that folder is not known. */
char *exe_sibling(const char *env, const char *file);
/* A copy of environ (the strings shared, the array the caller's to free)
 * less what a service manager gave this process alone: its notify socket,
 * its listening sockets, its watchdog. A child that is not the service
 * (a planner, a host's agent) has no word to say to the manager. */
char **environ_for_child(void);

/* A plugin of ofc's (util/plugin.c): a shared object whose one exported
 * table starts with its own size, a size_t, so that one of another build
 * is refused. Found through $env where set and not empty, else file
 * beside the program, one folder up (build/tests/ -> build/) or in
 * ../lib/ofc (bin/ofc and sbin/ofcd of an installation). */
struct plugin_spec {
	const char *what;   /* for errors: "the Clp LP solver" */
	const char *kind;   /* "Clp": "... is not this build's Clp plugin" */
	const char *file;   /* "libofc-clp.so" */
	const char *env;    /* "OFC_CLP_PLUGIN" */
	const char *symbol; /* the table's */
	size_t size;	    /* this build's table size */
	/* Told when a plugin was found but is not this build's; may be NULL. */
	void (*refused)(const char *why);
};
/* The plugin's table, or NULL with err (OFC_E_RUNTIME) saying why. */
const void *plugin_load(const struct plugin_spec *s, struct ofc_error *err);

/* A request's clock: one absolute deadline on the now_seconds()
 * clock that every phase of a long request checks, and where people watch,
 * a progress report. Library code calls clock_check() between units of
 * work and clock_progress() as it goes; the caller (a main) owns the clock
 * and decides what progress prints. A NULL clock is no deadline and no
 * report. */
struct ofc_clock {
	double start;	 /* now_seconds() when the request began */
	double deadline; /* absolute; 0: none */
	double limit;	 /* the seconds asked for (for messages) */
	/* phase, its fraction done (0..1, < 0: unknown), seconds since start */
	void (*progress)(void *ctx, const char *phase, double done, double elapsed);
	void *ctx;
};
/* 0, or -1 with err (OFC_E_RUNTIME) "time limit T reached in PHASE".
 * clock_progress with a NULL phase reports a new fraction of the last one. */
int clock_check(const struct ofc_clock *c, const char *phase, struct ofc_error *err);
bool clock_expired(const struct ofc_clock *c);
void clock_progress(const struct ofc_clock *c, const char *phase, double done);

#endif
