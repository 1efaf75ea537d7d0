/* What the tests that read help texts and messages share: whether a name
 * stands in a text as a word of a list. */
#ifndef OFC_TESTS_WORDS_H
#define OFC_TESTS_WORDS_H

#include <stdbool.h>
#include <string.h>

/* name appears in text as a whole word (not inside "bfb-lp" for "bfb"). */
static inline bool has_word(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
		bool start = p == text || strchr(" (,:'\n", p[-1]);
		bool end = strchr(" ),;'\n", p[n]) != NULL;

		if (start && end)
			return true;
	}
	return false;
}

#endif
