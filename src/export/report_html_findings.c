/* report.html's Findings section: what the run's numbers mean for it
 * (docs/diagnosis.md), most severe first; "No finding" when none holds. */
#include "report_htmlpriv.h"

#include "roastop/diagnosis.h"

static void finding_html(struct strbuf *o, const struct finding *f)
{
	strbuf_appendf(o, "<li class=\"finding %s\" data-id=\"%s\"><b%s>",
		       diagnosis_severity_name(f->severity), diagnosis_id_name(f->id),
		       f->severity == SEV_INFO ? "" : " class=\"warn\"");
	html_esc(o, f->title);
	strbuf_puts(o, "</b><br>");
	html_esc(o, f->evidence);
	strbuf_puts(o, "<br><span class=\"note\">");
	html_esc(o, f->suggestion);
	strbuf_puts(o, "</span></li>\n");
}

void report_html_findings(struct strbuf *o, const struct findings *fs)
{
	html_section(o, "findings", "Findings", NULL);
	if (fs->n == 0)
		strbuf_puts(o, "<p class=\"note\">No finding: no rule of docs/diagnosis.md holds for "
			       "this run.</p>\n");
	else
		strbuf_puts(o, "<ul>\n");
	for (size_t i = 0; i < fs->n; i++)
		finding_html(o, &fs->f[i]);
	strbuf_puts(o, fs->n ? "</ul></section>\n" : "</section>\n");
}
