/*
 * The pages of the browser sign-in: upstream's success page says "Signed in to Codex" and
 * that the page may be closed; its error page names what failed, the error code and the
 * details, with the same help line. Ours carry the same words in a plain page (upstream's
 * styling and its organization-setup redirect are not copied). Everything the issuer or the
 * network said is HTML-escaped before it is shown.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "login_int.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

#define PAGE_HEAD                                                                                      \
	"<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n<title>%s</title>\n" \
	"<style>body{font-family:system-ui,sans-serif;margin:15vh auto;max-width:600px;"               \
	"text-align:center;color:#0d0d0d}.details{color:#5d5d5d;text-align:left}</style>\n"            \
	"</head>\n<body>\n"

#define HELP_DEFAULT                                                                               \
	"Return to Codex to retry, switch accounts, or contact your workspace admin if access is " \
	"restricted."
#define NO_ENTITLEMENT                                                                             \
	"Codex is not enabled for your workspace. Contact your workspace administrator to "        \
	"request access to Codex."

/* Append s HTML-escaped. */
static void
page_escaped(struct buf *b, const char *s)
{
	for (; *s != '\0'; s++)
		switch (*s) {
		case '&':
			buf_adds(b, "&amp;");
			break;
		case '<':
			buf_adds(b, "&lt;");
			break;
		case '>':
			buf_adds(b, "&gt;");
			break;
		case '"':
			buf_adds(b, "&quot;");
			break;
		case '\'':
			buf_adds(b, "&#39;");
			break;
		default:
			buf_addc(b, *s);
		}
}

/* The buffer's text, handed over. */
static char *
page_take(struct buf *b)
{
	char *s = xstrdup(buf_str(b));

	buf_free(b);
	return s;
}

char *
login_page_success(void)
{
	struct buf b;

	buf_init(&b, 1 << 16);
	buf_printf(&b, PAGE_HEAD, "Sign into Codex");
	buf_adds(&b,
		"<h1>Signed in to Codex</h1>\n<p>You may now close this page</p>\n"
		"</body>\n</html>\n");
	return page_take(&b);
}

/* Whether the issuer refused for want of a Codex entitlement (upstream's test). */
static int
page_no_entitlement(const char *code, const char *description)
{
	const char *p;

	if (code == NULL || strcmp(code, "access_denied") != 0 || description == NULL)
		return 0;
	for (p = description; *p != '\0'; p++)
		if (strncasecmp(p, "missing_codex_entitlement", 25) == 0)
			return 1;
	return 0;
}

char *
login_callback_error(const char *code, const char *description)
{
	const char *d = description;

	if (page_no_entitlement(code, description))
		return xstrdup(NO_ENTITLEMENT);
	while (d != NULL && isspace((unsigned char)*d))
		d++;
	if (d != NULL && *d != '\0')
		return xasprintf("Sign-in failed: %s", description);
	return xasprintf("Sign-in failed: %s", code);
}

char *
login_page_error(const char *message, const char *code, const char *description)
{
	const char *title = "Sign-in could not be completed", *shown = message,
		   *details = description != NULL ? description : message, *help = HELP_DEFAULT;
	struct buf b;

	if (code == NULL)
		code = "unknown_error";
	if (page_no_entitlement(code, description)) {
		title = "You do not have access to Codex";
		shown = "This account is not currently authorized to use Codex in this workspace.";
		details = "Contact your workspace administrator to request access to Codex.";
		help = "Contact your workspace administrator to get access to Codex, then return to "
		       "Codex and try again.";
	}
	buf_init(&b, 1 << 16);
	buf_printf(&b, PAGE_HEAD, "Codex Sign-in Error");
	buf_adds(&b, "<p>Codex login</p>\n<h1>");
	page_escaped(&b, title);
	buf_adds(&b, "</h1>\n<p class=\"message\">");
	page_escaped(&b, shown);
	buf_adds(&b, "</p>\n<div class=\"details\">\n<p>Error code</p>\n<p><code>");
	page_escaped(&b, code);
	buf_adds(&b, "</code></p>\n<p>Details</p>\n<p>");
	page_escaped(&b, details);
	buf_adds(&b, "</p>\n</div>\n<p>");
	page_escaped(&b, help);
	buf_adds(&b, "</p>\n</body>\n</html>\n");
	return page_take(&b);
}
