/* A streaming JSON writer: the caller says what, the writer puts the commas. */
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
	fputc('\n', w->out);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->out);
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
			fputs(",", w->out);
		if (w->pretty && l->multiline)
			newline(w);
		else if (w->pretty && l->count)
			fputc(' ', w->out);
	} else {
		if (l->count)
			fputc(',', w->out);
		if (w->pretty)
			newline(w);
	}
	l->count++;
}

static void open(struct json_writer *w, char c, bool is_array)
{
	before(w, true);
	fputc(c, w->out);
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
	fputc(c, w->out);
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

	json_escape(&sb, s ? s : "");
	fputs(sb.buf, w->out);
	sb_free(&sb);
}

void jw_key(struct json_writer *w, const char *key)
{
	before(w, false);
	put_string(w, key);
	fputs(w->pretty ? ": " : ":", w->out);
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
	fprintf(w->out, "%lld", (long long)v);
}

void jw_uint(struct json_writer *w, uint64_t v)
{
	before(w, false);
	fprintf(w->out, "%llu", (unsigned long long)v);
}

void jw_double(struct json_writer *w, double v)
{
	char buf[40];

	before(w, false);
	if (!isfinite(v)) {
		fputs("null", w->out);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, w->out);
}

void jw_bool(struct json_writer *w, bool v)
{
	before(w, false);
	fputs(v ? "true" : "false", w->out);
}

void jw_null(struct json_writer *w)
{
	before(w, false);
	fputs("null", w->out);
}

void jw_finish(struct json_writer *w)
{
	fputc('\n', w->out);
}
