/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What lib/config.c works around in libconfuse, proved against the
 * installed library (HACKING, on libconfuse).  Each check passes while
 * the limit holds; when a newer libconfuse lifts one, the test skips (77)
 * naming the workaround that can go.
 */
#include <confuse.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The scanner's state: process-wide variables, hence config_parse_lock. */
extern int cfg_yylineno;
extern FILE *cfg_yyin;

static int confuse_line;

static void confuse_error(cfg_t *c, const char *fmt, va_list ap)
{
	(void)fmt;
	(void)ap;
	confuse_line = c->line;
}

/*
 * Parse text (from a stream if fp, with flags); the status, and in *line
 * the line of the first error.
 */
static int confuse_parse(const char *text, bool fp, cfg_flag_t flags,
			 int *line)
{
	cfg_opt_t sub[] = { CFG_STR("a", NULL, CFGF_NODEFAULT), CFG_END() };
	cfg_opt_t opts[] = {
		CFG_STR("x", NULL, CFGF_NODEFAULT),
		CFG_SEC("s", sub, CFGF_NONE),
		CFG_END()
	};
	cfg_t *c = cfg_init(opts, flags);
	FILE *f = NULL;
	int ret;

	if (c == NULL)
		return -1;
	cfg_set_error_function(c, confuse_error);
	confuse_line = 0;
	if (fp) {
		f = fmemopen((void *)text, strlen(text), "r");
		ret = f != NULL ? cfg_parse_fp(c, f) : -1;
		if (f != NULL)
			fclose(f);
	} else {
		ret = cfg_parse_buf(c, text);
	}
	*line = confuse_line;
	cfg_free(c);
	return ret;
}

int main(void)
{
	int line, lifted = 0;

	/*
	 * An error on line 4, after three line comments: from a buffer, a
	 * stream, and with comments kept as annotations.
	 */
	for (int i = 0; i < 3; i++) {
		static const char text[] =
			"# one\n# two\n// three\nbogus = 1\n";

		if (confuse_parse(text, i == 1, i == 2 ? CFGF_COMMENTS : 0,
				  &line) != CFG_PARSE_ERROR || line == 4) {
			printf("comments no longer shift line numbers (case "
			       "%d, line %d): config_read_text need not blank "
			       "them\n", i, line);
			lifted++;
		} else {
			printf("case %d: an error on line 4 after three "
			       "comments is reported on line %d: "
			       "config_read_text blanks comments\n", i, line);
		}
	}
	if (confuse_parse("s {\n a = 1\n", false, 0, &line) !=
	    CFG_PARSE_ERROR)
		printf("an unclosed section still parses: "
		       "config_read_text counts braces\n");
	else
		lifted++;
	printf("scanner state is global: cfg_yylineno at %p, cfg_yyin at "
	       "%p\n", (void *)&cfg_yylineno, (void *)&cfg_yyin);
	return lifted ? 77 : 0;
}
