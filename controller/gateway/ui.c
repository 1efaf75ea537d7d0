/* ofc-gateway's page (docs/ofcd.md, "The operator's page"): GET /ui/ and
 * its files, read from one directory (--ui-dir; `make install` puts them
 * in share/ofc/ui), to the certificates the policy names, as the API's
 * routes are; and GET /ui/whoami, the principal the page is shown to, so
 * that it offers only what that role may ask for.
 *
 * The page holds nothing of the fabric: it reads the state from the API
 * (GET /v1/state) and keeps it current through the API's Watch, each with
 * the same role checks in ofcd as any client's. What is served here is
 * only what the directory holds, and only a plain file directly in it: a
 * name is one path component of letters, digits, '-', '_' and '.', not
 * starting with a dot, with an extension of the table below (which fixes
 * its Content-Type); it is opened beneath the directory's descriptor with
 * O_NOFOLLOW, so a symbolic link (one pointing out of it, or any) is
 * refused, and a file over GW_UI_MAX_FILE is refused rather than read.
 * libmicrohttpd has decoded %XX before the name is checked, so "%2e%2e",
 * "%2f" and the like are checked as what they decode to. */
#include "controller/gateway/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define GW_UI_MAX_FILE (4u << 20)
#define GW_UI_MAX_NAME 64
#define GW_UI_INDEX    "index.html"

struct gw_ui {
	int dirfd;
	char *dir;
};

/* The only types served, by extension. */
static const struct {
	const char *ext, *type;
} types[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".txt", "text/plain; charset=utf-8"},
};

/* The page's own scripts, styles and images, and the API on the same
 * origin: nothing inline, nothing from elsewhere, never in a frame. */
#define GW_UI_CSP                                                                                  \
	"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "          \
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

int gw_ui_open(const char *dir, struct gw_ui **out, struct ofc_error *err)
{
	struct stat st;
	int fd;

	*out = NULL;
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return ofc_error_set(err, OFC_E_INPUT, "--ui-dir %s: %s", dir, strerror(errno));
	if (fstatat(fd, GW_UI_INDEX, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return ofc_error_set(err, OFC_E_INPUT,
				     "--ui-dir %s: no %s in it (the page's files: share/ofc/ui "
				     "where ofc is installed, contrib/ui in its source tree)",
				     dir, GW_UI_INDEX);
	}
	*out = xcalloc(1, sizeof(**out));
	(*out)->dirfd = fd;
	(*out)->dir = xstrdup(dir);
	return 0;
}

void gw_ui_close(struct gw_ui *ui)
{
	if (!ui)
		return;
	close(ui->dirfd);
	free(ui->dir);
	free(ui);
}

static const char *url_mode(struct MHD_Connection *mc)
{
	const char *m = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Sec-Fetch-Mode");

	return m ? m : "";
}

bool gw_ui_route(const char *url)
{
	return strcmp(url, "/ui") == 0 || strncmp(url, "/ui/", 4) == 0;
}

/* The Content-Type of a name the page may ask for, or NULL: one path
 * component, [A-Za-z0-9_.-], not starting with '.', no "..", a known
 * extension. */
const char *gw_ui_type(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > GW_UI_MAX_NAME || name[0] == '.' || strstr(name, ".."))
		return NULL;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
			return NULL;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		size_t e = strlen(types[i].ext);

		if (n > e && strcmp(name + n - e, types[i].ext) == 0)
			return types[i].type;
	}
	return NULL;
}

static enum MHD_Result ui_send(struct MHD_Connection *mc, unsigned code, const char *type,
			       char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result rc;

	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-cache");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Content-Security-Policy", GW_UI_CSP);
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	rc = MHD_queue_response(mc, code, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result send_text(struct MHD_Connection *mc, unsigned code, const char *msg)
{
	char *body = xasprintf("%s\n", msg);

	return ui_send(mc, code, "text/plain; charset=utf-8", body, strlen(body));
}

/* The principal as the page reads it: identity, role, partitions (a
 * tenant's); and the gateway's CRL nextUpdate (crl_next_update, unix s,
 * absent when it loads no CRL), past which it refuses every client
 * certificate: the page's alarm. Nothing secret: what the certificate,
 * the policy and the public CRL say. */
static enum MHD_Result whoami(struct MHD_Connection *mc, const Ofc__V1__Principal *pr,
			      int64_t crl_next)
{
	json_object *o = json_object_new_object(), *parts = json_object_new_array();
	const char *role = pr->role == OFC__V1__PRINCIPAL__ROLE__ROLE_ADMIN	  ? "admin"
			   : pr->role == OFC__V1__PRINCIPAL__ROLE__ROLE_READ_ONLY ? "read-only"
			   : pr->role == OFC__V1__PRINCIPAL__ROLE__ROLE_HOST	  ? "host"
										  : "tenant";

	json_object_object_add(o, "identity", json_object_new_string(pr->identity));
	json_object_object_add(o, "role", json_object_new_string(role));
	for (size_t i = 0; i < pr->n_partitions; i++)
		json_object_array_add(parts, json_object_new_string(pr->partitions[i]));
	json_object_object_add(o, "partitions", parts);
	if (crl_next)
		json_object_object_add(o, "crl_next_update", json_object_new_int64(crl_next));
	char *body = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return ui_send(mc, MHD_HTTP_OK, "application/json", body, strlen(body));
}

/* The file `name` beneath the directory, whole: 0 with *buf, or an HTTP
 * status (404: none such, or not a plain file; 413: too large). */
static unsigned read_asset(const struct gw_ui *ui, const char *name, char **buf, size_t *len)
{
	struct stat st;
	int fd = openat(ui->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return MHD_HTTP_NOT_FOUND; /* ENOENT, ELOOP (a link), EACCES */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return MHD_HTTP_NOT_FOUND;
	}
	if ((uint64_t)st.st_size > GW_UI_MAX_FILE) {
		close(fd);
		return MHD_HTTP_CONTENT_TOO_LARGE;
	}
	*buf = xmalloc((size_t)st.st_size + 1);
	*len = 0;
	while (*len < (size_t)st.st_size) {
		ssize_t k = read(fd, *buf + *len, (size_t)st.st_size - *len);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break; /* shrank meanwhile: what was there */
		*len += (size_t)k;
	}
	close(fd);
	return 0;
}

/* The length of host without a default ":443" (an Origin and a Host may
 * each name it or not). */
static size_t host_len(const char *h)
{
	size_t n = strlen(h);

	return n > 4 && strcmp(h + n - 4, ":443") == 0 ? n - 4 : n;
}

/* Whether an Origin names this gateway as the request reached it: https
 * and the Host the browser sent ("null", another scheme, host or port:
 * another site). */
static bool own_origin(struct MHD_Connection *mc, const char *origin)
{
	const char *host = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Host");
	const char *o = origin + strlen("https://");

	if (!host || strncasecmp(origin, "https://", strlen("https://")) != 0)
		return false;
	return host_len(o) == host_len(host) && strncasecmp(o, host, host_len(host)) == 0;
}

bool gw_ui_cross_site(struct MHD_Connection *mc, const char *method, bool page)
{
	const char *site = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Sec-Fetch-Site");
	const char *origin = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Origin");

	/* Either says another site: browsers before Safari 16.4 send no
	 * Sec-Fetch-Site, and every browser sends Origin with a POST. */
	bool by_site = site && strcmp(site, "same-origin") != 0 && strcmp(site, "none") != 0;

	if (!by_site && (!origin || own_origin(mc, origin)))
		return false;
	/* a link from elsewhere to the page itself: it opens, and its own
	 * requests are then same-origin */
	return !(page && strcmp(method, "GET") == 0 && strcmp(url_mode(mc), "navigate") == 0);
}

enum MHD_Result gw_ui_answer(const struct gw_ui *ui, struct MHD_Connection *mc, const char *method,
			     const char *url, const Ofc__V1__Principal *pr, int64_t crl_next_update)
{
	const char *name = url[3] ? url + 4 : "";
	const char *type;
	unsigned code;
	size_t len;
	char *buf;

	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return send_text(mc, MHD_HTTP_METHOD_NOT_ALLOWED, "the page is read with GET");
	if (!ui)
		return send_text(mc, MHD_HTTP_NOT_FOUND,
				 "this gateway serves no page (ofc-gateway --ui-dir DIR)");
	if (strcmp(url, "/ui") == 0) { /* relative links need the slash */
		struct MHD_Response *r =
		    MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
		enum MHD_Result rc;

		MHD_add_response_header(r, "Location", "/ui/");
		rc = MHD_queue_response(mc, MHD_HTTP_PERMANENT_REDIRECT, r);
		MHD_destroy_response(r);
		return rc;
	}
	if (strcmp(name, "whoami") == 0)
		return whoami(mc, pr, crl_next_update);
	if (!*name)
		name = GW_UI_INDEX;
	if (!(type = gw_ui_type(name)))
		return send_text(mc, MHD_HTTP_NOT_FOUND, "no such file of the page");
	code = read_asset(ui, name, &buf, &len);
	if (code == MHD_HTTP_CONTENT_TOO_LARGE)
		return send_text(mc, code, "the file is larger than the page's files may be");
	if (code)
		return send_text(mc, code, "no such file of the page");
	return ui_send(mc, MHD_HTTP_OK, type, buf, len);
}
