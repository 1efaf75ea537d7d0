/* A streaming JSON writer: the caller says what, the writer puts the commas.
 *
 * A writer's FILE is its own thread's (a reply, an export, stdout), so it
 * writes without stdio's lock: a schedule's JSON is tens of millions of
 * small writes, and taking the lock in each was a fifth of exporting one. */
#include "util/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void jw_init(struct json_writer *w, FILE *out, bool pretty)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->pretty = pretty;
}

static void newline(struct json_writer *w)
{
	/* The line break and the indent (two spaces a level, at most
	 * JSON_MAX_DEPTH levels) in one write. */
	static const char line[] = "\n"
				   "                                "
				   "                                ";
	_Static_assert(sizeof(line) == 2 + 2 * JSON_MAX_DEPTH, "an indent for every depth");

	fwrite_unlocked(line, 1, 1 + 2 * (size_t)w->depth, w->out);
}

/* Called before every value and every key. */
static void before(struct json_writer *w, bool container)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth == 0)
		return;
	struct json_level *l = &w->level[w->depth - 1];
	if (l->is_array) {
		if (container && l->count == 0)
			l->multiline = true;
		if (l->count)
			fputs_unlocked(",", w->out);
		if (w->pretty && l->multiline)
			newline(w);
		else if (w->pretty && l->count)
			fputc_unlocked(' ', w->out);
	} else {
		if (l->count)
			fputc_unlocked(',', w->out);
		if (w->pretty)
			newline(w);
	}
	l->count++;
}

static void open(struct json_writer *w, char c, bool is_array)
{
	before(w, true);
	fputc_unlocked(c, w->out);
	if (w->depth >= JSON_MAX_DEPTH)
		abort(); /* a programming error: no ofc document nests this deep */
	w->level[w->depth].is_array = is_array;
	w->level[w->depth].count = 0;
	w->level[w->depth].multiline = false;
	w->depth++;
}

static void close_(struct json_writer *w, char c)
{
	bool broke;

	w->depth--;
	broke = w->level[w->depth].count &&
		(!w->level[w->depth].is_array || w->level[w->depth].multiline);
	if (w->pretty && broke)
		newline(w);
	fputc_unlocked(c, w->out);
}

void jw_obj_begin(struct json_writer *w)
{
	open(w, '{', false);
}

void jw_obj_end(struct json_writer *w)
{
	close_(w, '}');
}

void jw_arr_begin(struct json_writer *w)
{
	open(w, '[', true);
}

void jw_arr_end(struct json_writer *w)
{
	close_(w, ']');
}

void json_escape(struct strbuf *sb, const char *s)
{
	sb_putc(sb, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			sb_puts(sb, "\\\"");
			break;
		case '\\':
			sb_puts(sb, "\\\\");
			break;
		case '\n':
			sb_puts(sb, "\\n");
			break;
		case '\r':
			sb_puts(sb, "\\r");
			break;
		case '\t':
			sb_puts(sb, "\\t");
			break;
		default:
			if (*p < 0x20)
				sb_printf(sb, "\\u%04x", *p);
			else
				sb_putc(sb, (char)*p);
		}
	}
	sb_putc(sb, '"');
}

static void put_string(struct json_writer *w, const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = s = s ? s : "";

	/* Keys and names need no escape: written as they are, no buffer. */
	while ((unsigned char)*p >= 0x20 && *p != '"' && *p != '\\')
		p++;
	if (!*p) {
		fputc_unlocked('"', w->out);
		fwrite_unlocked(s, 1, (size_t)(p - s), w->out);
		fputc_unlocked('"', w->out);
		return;
	}
	json_escape(&sb, s);
	fputs_unlocked(sb.buf, w->out);
	sb_free(&sb);
}

/* v in decimal, as "%llu" writes it. */
static void put_u64(FILE *out, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);

	*--p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	fputs_unlocked(p, out);
}

static uint64_t key_hash(const char *key)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (; *key; key++)
		h = (h ^ (unsigned char)*key) * 0x100000001b3ull;
	return h;
}

bool jw_wrote_key(const struct json_writer *w, const char *key)
{
	uint64_t h = key_hash(key);

	for (unsigned i = 0; i < w->ntop; i++)
		if (w->top[i] == h)
			return true;
	return false;
}

void jw_key(struct json_writer *w, const char *key)
{
	if (w->depth == 1 && !w->level[0].is_array && w->ntop < JSON_TOP_KEYS)
		w->top[w->ntop++] = key_hash(key);
	before(w, false);
	put_string(w, key);
	fputs_unlocked(w->pretty ? ": " : ":", w->out);
	w->after_key = true;
}

void jw_str(struct json_writer *w, const char *s)
{
	before(w, false);
	put_string(w, s);
}

void jw_int(struct json_writer *w, int64_t v)
{
	before(w, false);
	if (v < 0)
		fputc_unlocked('-', w->out);
	put_u64(w->out, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
}

void jw_uint(struct json_writer *w, uint64_t v)
{
	before(w, false);
	put_u64(w->out, v);
}

void jw_double(struct json_writer *w, double v)
{
	char buf[40];

	before(w, false);
	if (!isfinite(v)) {
		fputs_unlocked("null", w->out);
		return;
	}
	/* A whole number below 10^15 (and not -0): what "%.15g" writes is
	 * its digits. Most of a schedule's numbers (nodes, whole blocks). */
	if (fabs(v) < 1e15 && v == (double)(int64_t)v && !(v == 0 && signbit(v))) {
		if (v < 0)
			fputc_unlocked('-', w->out);
		put_u64(w->out, (uint64_t)fabs(v));
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs_unlocked(buf, w->out);
}

void jw_bool(struct json_writer *w, bool v)
{
	before(w, false);
	fputs_unlocked(v ? "true" : "false", w->out);
}

void jw_null(struct json_writer *w)
{
	before(w, false);
	fputs_unlocked("null", w->out);
}

void jw_finish(struct json_writer *w)
{
	fputc_unlocked('\n', w->out);
}
