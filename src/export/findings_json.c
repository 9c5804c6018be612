/* metrics.json's roastop.findings: each finding's id, severity, title,
 * evidence, suggestion, when it began (epoch seconds and seconds into the
 * run; null: not known) and its cost (a share of the run's time, null when
 * the rule has none). */
#include "roastop/findings_json.h"

#include <math.h>


static void finding_json(struct jsonw *w, const struct finding *f, double t0)
{
	jsonw_object(w, NULL);
	jsonw_str(w, "id", diagnosis_id_name(f->id));
	jsonw_str(w, "severity", diagnosis_severity_name(f->severity));
	jsonw_str(w, "title", f->title);
	jsonw_str(w, "evidence", f->evidence);
	jsonw_str(w, "suggestion", f->suggestion);
	jsonw_num(w, "since", f->since);
	jsonw_num(w, "since_run_seconds", f->since - t0); /* NaN: null */
	jsonw_num(w, "cost_share", f->cost > 0 ? f->cost : NAN);
	jsonw_end(w, '}');
}

void findings_json(struct jsonw *w, const struct findings *fs, double t0)
{
	jsonw_array(w, "findings");
	for (size_t i = 0; i < fs->n; i++)
		finding_json(w, &fs->f[i], t0);
	jsonw_end(w, ']');
}
