/* Plugins: shared objects of ofc's that a program loads the first time a
 * model or a config asks for what they hold, so that the libraries behind
 * them (Clp's C++ and BLAS, NETCONF's libssh, GnuTLS and libyang) cost
 * nothing to the runs that never do: neither resident memory nor the
 * dynamic loader's time at every start. */
#include "util/util.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The plugin at path, its table; NULL (why in why) when it cannot be
 * loaded or is of another build (then s->refused is told). RTLD_NODELETE:
 * never unloaded (a plugin's statics, C++'s among them, live as long as
 * the process), so loading it again costs only dlopen's reference count. */
static const void *plugin_try(const struct plugin_spec *s, const char *path, char *why, size_t len)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	const size_t *table;

	if (!h) {
		snprintf(why, len, "%s", dlerror());
		return NULL;
	}
	table = dlsym(h, s->symbol);
	if (!table)
		snprintf(why, len, "%s is not a %s plugin of ofc (no %s)", path, s->kind,
			 s->symbol);
	else if (*table != s->size)
		snprintf(why, len,
			 "%s is not this build's %s plugin (its table is %zu bytes, this "
			 "build's %zu)",
			 path, s->kind, *table, s->size);
	else
		return table;
	if (s->refused)
		s->refused(why);
	dlclose(h);
	return NULL;
}

const void *plugin_load(const struct plugin_spec *s, struct ofc_error *err)
{
	static const char *const where[] = {"", "/..", "/../lib/ofc"};
	char exe[PATH_MAX], path[PATH_MAX + 64], why[PATH_MAX + 128] = "not found";
	const char *env = getenv(s->env);
	const void *table;
	ssize_t n;

	if (env && *env) {
		if ((table = plugin_try(s, env, why, sizeof(why))))
			return table;
		ofc_error_set(err, OFC_E_RUNTIME, "%s is not available: %s", s->what, why);
		return NULL;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		*strrchr(exe, '/') = 0;
		for (size_t i = 0; i < ARRAY_SIZE(where); i++) {
			snprintf(path, sizeof(path), "%s%s/%s", exe, where[i], s->file);
			if (access(path, F_OK) == 0 &&
			    (table = plugin_try(s, path, why, sizeof(why))))
				return table;
		}
	}
	ofc_error_set(err, OFC_E_RUNTIME,
		      "%s is not available (%s beside the program, one folder up or in "
		      "../lib/ofc, or $%s): %s",
		      s->what, s->file, s->env, why);
	return NULL;
}
