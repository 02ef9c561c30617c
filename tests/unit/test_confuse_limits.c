/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What lib/config.c works around in libconfuse, proved against the
 * installed library (HACKING, on libconfuse).  Each check passes while
 * the limit holds; when a newer libconfuse lifts one, the test skips (77)
 * naming the workaround that can go.
 */
#include <confuse.h>
#include <stdarg.h>
#include <stdio.h>

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

/* Parse text; the status, and in *line the line of the first error. */
static int confuse_parse(const char *text, int *line)
{
	cfg_opt_t sub[] = { CFG_STR("a", NULL, CFGF_NODEFAULT), CFG_END() };
	cfg_opt_t opts[] = {
		CFG_STR("x", NULL, CFGF_NODEFAULT),
		CFG_SEC("s", sub, CFGF_NONE),
		CFG_END()
	};
	cfg_t *c = cfg_init(opts, CFGF_NONE);
	int ret;

	if (c == NULL)
		return -1;
	cfg_set_error_function(c, confuse_error);
	confuse_line = 0;
	ret = cfg_parse_buf(c, text);
	*line = confuse_line;
	cfg_free(c);
	return ret;
}

int main(void)
{
	int line, lifted = 0;

	/* An error on line 4, after three line comments. */
	if (confuse_parse("# one\n# two\n// three\nbogus = 1\n", &line) !=
	    CFG_PARSE_ERROR || line == 4) {
		printf("comments no longer shift line numbers (line %d): "
		       "config_read_text need not blank them\n", line);
		lifted++;
	} else {
		printf("an error on line 4 after three comments is reported "
		       "on line %d: config_read_text blanks comments\n", line);
	}
	if (confuse_parse("s {\n a = 1\n", &line) != CFG_PARSE_ERROR)
		printf("an unclosed section still parses: "
		       "config_read_text counts braces\n");
	else
		lifted++;
	printf("scanner state is global: cfg_yylineno at %p, cfg_yyin at "
	       "%p\n", (void *)&cfg_yylineno, (void *)&cfg_yyin);
	return lifted ? 77 : 0;
}
