/* The comparison as markdown, JSON (documented in docs/compare.md) and a
 * self-contained HTML page with SVG charts. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../spec/spec_internal.h"
#include "../targets/target_table.h"
#include "compare.h"

/* What the figures are and are not; the llvm-mca model of each ISA comes
 * from its row of the ISA table (targets/README.md says why each). */
static void limits_text(char *out, size_t cap) {
    size_t n = (size_t)snprintf(
        out, cap, "%s",
        "llvm-mca: a static estimate for the main loop alone, 100 iterations of straight-line code (both sides of a "
        "branch inside the loop are counted, except a side path that calls out of line, the rare case; no cache "
        "misses, perfect prediction, the loop's own branch included). "
        "Models:");
    for (qg_isa isa = QG_ISA_SCALAR + 1; isa < QG_ISA_COUNT && n < cap; isa++) {
        const qg_target *t = qg_target_of(isa);
        n += (size_t)snprintf(out + n, cap - n, " %s %s", t->name, t->mca_cpus);
        if (t->compare_bits && n < cap)
            n += (size_t)snprintf(out + n, cap - n, " at %d-bit vectors", t->compare_bits);
        if (n < cap)
            n += (size_t)snprintf(out + n, cap - n, "%s", isa + 1 < QG_ISA_COUNT ? ";" : ".");
    }
    if (n < cap)
        snprintf(out + n, cap - n, "%s",
                 " Elements per iteration come from the generator (vectors per iteration x lanes). Measured: this "
                 "machine, one thread, median of 7 runs of at least 20 ms at 65536 elements; foreign ISAs run under "
                 "qemu for correctness only, never timed.");
}

static void mca_text(const qg_compare_row *r, char *out, size_t cap) {
    out[0] = 0;
    for (int m = 0; m < r->n_mca; m++) {
        char one[96];
        if (r->mca[m].ok)
            snprintf(one, sizeof one, "%s%s %.3f", m ? "; " : "", r->mca[m].cpu, r->mca[m].cycles_per_element);
        else
            snprintf(one, sizeof one, "%s%s: n/a", m ? "; " : "", r->mca[m].cpu);
        strncat(out, one, cap - strlen(out) - 1);
    }
    if (!out[0])
        snprintf(out, cap, "-");
}

static const char *tri(int v) { return v < 0 ? "-" : v ? "yes" : "NO"; }

/* "38 (4/1/24/4/4/6)"; loads and stores are "?" without llvm-mca */
static void loop_text(const qg_compare_row *w, char *out, size_t cap) {
    char ld[16] = "?", st[16] = "?";
    if (w->mix[QG_MIX_LOADS] >= 0)
        snprintf(ld, sizeof ld, "%d", w->mix[QG_MIX_LOADS]);
    if (w->mix[QG_MIX_STORES] >= 0)
        snprintf(st, sizeof st, "%d", w->mix[QG_MIX_STORES]);
    snprintf(out, cap, "%d (%s/%s/%d/%d/%d/%d)", w->loop_instructions, ld, st, w->mix[QG_MIX_ARITH],
             w->mix[QG_MIX_CONVERT], w->mix[QG_MIX_SHUFFLE], w->mix[QG_MIX_OTHER]);
}

/* The distinct reasons why a model gave no figure, once each. */
static int model_notes(const qg_compare_report *r, const char *out[16]) {
    int n = 0;
    for (size_t i = 0; i < r->nrows; i++)
        for (int m = 0; m < r->rows[i].n_mca; m++) {
            const char *note = r->rows[i].mca[m].note;
            if (!note[0])
                continue;
            bool seen = false;
            for (int k = 0; k < n && !seen; k++)
                seen = strcmp(out[k], note) == 0;
            if (!seen && n < 16)
                out[n++] = note;
        }
    return n;
}

void qg_compare_write_md(const qg_compare_report *r, FILE *f) {
    fprintf(f, "qgen compare: spec `%s` (qgen %s, LLVM %s)\n\n", r->spec.name, QGEN_VERSION, r->llvm_version);
    fprintf(f, "| op | ISA | backend | code bytes | loop instr (ld/st/arith/cvt/shuf/other) | elem/iter | "
               "cycles/elem (llvm-mca) | measured Melem/s | run | correct | backends agree |\n");
    fprintf(f, "|---|---|---|---:|---|---:|---|---:|---|---|---|\n");
    for (size_t i = 0; i < r->nrows; i++) {
        const qg_compare_row *w = &r->rows[i];
        char bytes[32] = "-", loop[600] = "-", elems[16] = "-", mca[200], meas[32] = "-";
        if (w->code_bytes >= 0)
            snprintf(bytes, sizeof bytes, "%ld", w->code_bytes);
        if (w->loop_found) {
            loop_text(w, loop, sizeof loop);
            snprintf(elems, sizeof elems, "%d", w->elements_per_iteration);
        } else if (w->note[0]) {
            snprintf(loop, sizeof loop, "%s", w->note);
        }
        mca_text(w, mca, sizeof mca);
        if (w->measured)
            snprintf(meas, sizeof meas, "%.0f", w->measured_melem_per_s);
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", qg_kernel_op_name(w->op),
                qg_isa_name(w->isa), qg_backend_name(w->backend), bytes, loop, elems, mca, meas, w->run,
                tri(w->correct), tri(w->agree));
    }
    fprintf(f, "\n");
    char lim[2048];
    limits_text(lim, sizeof lim);
    fputs(lim, f);
    fprintf(f, "\n");
    for (int k = 0; k < r->nnotes; k++)
        fprintf(f, "\nNote: %s\n", r->notes[k]);
    const char *mn[16];
    const int nm = model_notes(r, mn);
    for (int k = 0; k < nm; k++)
        fprintf(f, "\nNote: %s\n", mn[k]);
}

/* ---- JSON ---------------------------------------------------------------- */

static json_t *maybe_real(bool ok, double v) { return ok ? json_real(v) : json_null(); }
static json_t *tri_json(int v) { return v < 0 ? json_null() : json_boolean(v); }

qg_status qg_compare_write_json(const qg_compare_report *r, FILE *f, qg_error *err) {
    json_t *root = json_object();
    json_object_set_new(root, "format", json_string("qgen-compare/1"));
    json_object_set_new(root, "qgen_version", json_string(QGEN_VERSION));
    json_object_set_new(root, "llvm_version", json_string(r->llvm_version));
    char *spec_text = qg_spec_to_json(&r->spec);
    json_object_set_new(root, "spec", spec_text ? json_loads(spec_text, 0, NULL) : json_null());
    free(spec_text);
    json_object_set_new(root, "measured_elements", json_integer(65536));
    json_object_set_new(root, "rvv_vlen", json_integer(r->rvv_vlen));
    char lim[1200];
    limits_text(lim, sizeof lim);
    json_object_set_new(root, "limits", json_string(lim));
    json_t *notes = json_array();
    for (int k = 0; k < r->nnotes; k++)
        json_array_append_new(notes, json_string(r->notes[k]));
    json_object_set_new(root, "notes", notes);
    json_t *rows = json_array();
    for (size_t i = 0; i < r->nrows; i++) {
        const qg_compare_row *w = &r->rows[i];
        json_t *o = json_object();
        json_object_set_new(o, "op", json_string(qg_kernel_op_name(w->op)));
        json_object_set_new(o, "isa", json_string(qg_isa_name(w->isa)));
        json_object_set_new(o, "backend", json_string(qg_backend_name(w->backend)));
        json_object_set_new(o, "code_bytes", w->code_bytes >= 0 ? json_integer(w->code_bytes) : json_null());
        if (w->loop_found) {
            json_t *loop = json_object(), *mix = json_object();
            json_object_set_new(loop, "instructions", json_integer(w->loop_instructions));
            json_object_set_new(loop, "elements_per_iteration", json_integer(w->elements_per_iteration));
            for (int k = 0; k < QG_MIX_COUNT; k++)
                json_object_set_new(mix, qg_mix_name(k), w->mix[k] >= 0 ? json_integer(w->mix[k]) : json_null());
            json_object_set_new(loop, "mix", mix);
            json_object_set_new(o, "loop", loop);
        } else {
            json_object_set_new(o, "loop", json_null());
        }
        json_t *mca = json_array();
        for (int m = 0; m < w->n_mca; m++) {
            json_t *e = json_object();
            json_object_set_new(e, "cpu", json_string(w->mca[m].cpu));
            json_object_set_new(e, "cycles_per_iteration", maybe_real(w->mca[m].ok, w->mca[m].cycles_per_iteration));
            json_object_set_new(e, "cycles_per_element", maybe_real(w->mca[m].ok, w->mca[m].cycles_per_element));
            json_object_set_new(e, "note", w->mca[m].note[0] ? json_string(w->mca[m].note) : json_null());
            json_array_append_new(mca, e);
        }
        json_object_set_new(o, "mca", mca);
        json_object_set_new(o, "run", json_string(w->run));
        json_object_set_new(o, "measured_melem_per_s", maybe_real(w->measured, w->measured_melem_per_s));
        json_object_set_new(o, "correct", tri_json(w->correct));
        json_object_set_new(o, "backends_agree", tri_json(w->agree));
        json_object_set_new(o, "note", w->note[0] ? json_string(w->note) : json_null());
        json_array_append_new(rows, o);
    }
    json_object_set_new(root, "rows", rows);
    int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    fputc('\n', f);
    json_decref(root);
    return rc == 0 ? QG_OK : qg_error_set(err, QG_ERR_IO, "compare: cannot write the JSON output");
}

/* ---- HTML with SVG charts -------------------------------------------------- */

static void html_escape(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else
            fputc(*s, f);
    }
}

/* The figure a chart shows for one row: measured Melem/s, or the first
 * model's cycles per element; false when the row has none. */
static bool chart_value(const qg_compare_row *w, bool measured, double *v) {
    if (measured ? !w->measured : !(w->n_mca > 0 && w->mca[0].ok))
        return false;
    *v = measured ? w->measured_melem_per_s : w->mca[0].cycles_per_element;
    return true;
}

/* A horizontal bar chart of one figure per row (rows without it skipped). */
static void svg_chart(FILE *f, const qg_compare_report *r, const char *title, const char *unit, bool measured) {
    double max = 0.0;
    int n = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        const qg_compare_row *w = &r->rows[i];
        double v;
        if (!chart_value(w, measured, &v))
            continue;
        max = v > max ? v : max;
        n++;
    }
    fprintf(f, "<h2>");
    html_escape(f, title);
    fprintf(f, "</h2>\n");
    if (n == 0 || max <= 0.0) {
        fprintf(f, "<p>No figures.</p>\n");
        return;
    }
    const int bar_h = 16, gap = 4, label_w = 290, plot_w = 520, top = 10;
    const int height = top + n * (bar_h + gap) + 30;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\">\n",
            label_w + plot_w + 140, height);
    int y = top;
    for (size_t i = 0; i < r->nrows; i++) {
        const qg_compare_row *w = &r->rows[i];
        double v;
        if (!chart_value(w, measured, &v))
            continue;
        const int len = (int)(v / max * plot_w + 0.5);
        const char *color = w->backend == QG_BACKEND_C ? "#3b6ea8" : "#d9822b";
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\">%s %s %s%s%s</text>\n", label_w - 6,
                y + 12, qg_kernel_op_name(w->op), qg_isa_name(w->isa), qg_backend_name(w->backend),
                measured ? "" : " @", measured ? "" : w->mca[0].cpu);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", label_w, y, len > 1 ? len : 1,
                bar_h, color);
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\">%.*f %s</text>\n", label_w + len + 4, y + 12,
                measured ? 0 : 3, v, unit);
        y += bar_h + gap;
    }
    fprintf(f,
            "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"#3b6ea8\"/>"
            "<text x=\"%d\" y=\"%d\" font-size=\"12\">C backend</text>\n",
            label_w, y + 6, label_w + 16, y + 16);
    fprintf(f,
            "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"#d9822b\"/>"
            "<text x=\"%d\" y=\"%d\" font-size=\"12\">LLVM backend</text>\n",
            label_w + 110, y + 6, label_w + 126, y + 16);
    fprintf(f, "</svg>\n");
}

void qg_compare_write_html(const qg_compare_report *r, FILE *f) {
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>qgen compare: %s</title>\n",
            r->spec.name);
    fprintf(f, "<style>body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse;"
               "font-size:12px}td,th{border:1px solid #ccc;padding:3px 6px;text-align:left}"
               "th{background:#eee}td.n{text-align:right}.bad{color:#b00;font-weight:bold}</style>\n");
    fprintf(f, "</head><body>\n<h1>qgen compare: spec <code>%s</code></h1>\n", r->spec.name);
    fprintf(f, "<p>qgen %s, LLVM %s.</p>\n", QGEN_VERSION, r->llvm_version);
    svg_chart(f, r, "Static estimate: cycles per element (llvm-mca, first model of each ISA; lower is better)",
              "c/elem", false);
    svg_chart(f, r, "Measured on this machine: Melem/s (median; higher is better)", "Melem/s", true);
    fprintf(f, "<h2>Every op, ISA and backend</h2>\n<table>\n<tr><th>op</th><th>ISA</th><th>backend</th>"
               "<th>code bytes</th><th>loop instr (ld/st/arith/cvt/shuf/other)</th><th>elem/iter</th>"
               "<th>cycles/elem (llvm-mca)</th><th>measured Melem/s</th><th>run</th><th>correct</th>"
               "<th>backends agree</th></tr>\n");
    for (size_t i = 0; i < r->nrows; i++) {
        const qg_compare_row *w = &r->rows[i];
        char mca[200];
        mca_text(w, mca, sizeof mca);
        fprintf(f, "<tr><td>%s</td><td>%s</td><td>%s</td><td class=\"n\">", qg_kernel_op_name(w->op),
                qg_isa_name(w->isa), qg_backend_name(w->backend));
        if (w->code_bytes >= 0)
            fprintf(f, "%ld", w->code_bytes);
        fprintf(f, "</td><td>");
        char loop[64];
        loop_text(w, loop, sizeof loop);
        if (w->loop_found)
            fputs(loop, f);
        else
            html_escape(f, w->note);
        fprintf(f, "</td><td class=\"n\">");
        if (w->loop_found)
            fprintf(f, "%d", w->elements_per_iteration);
        fprintf(f, "</td><td>");
        html_escape(f, mca);
        fprintf(f, "</td><td class=\"n\">");
        if (w->measured)
            fprintf(f, "%.0f", w->measured_melem_per_s);
        fprintf(f, "</td><td>");
        html_escape(f, w->run);
        fprintf(f, "</td><td%s>%s</td><td%s>%s</td></tr>\n", w->correct == 0 ? " class=\"bad\"" : "", tri(w->correct),
                w->agree == 0 ? " class=\"bad\"" : "", tri(w->agree));
    }
    fprintf(f, "</table>\n<p>");
    char lim[1200];
    limits_text(lim, sizeof lim);
    html_escape(f, lim);
    fprintf(f, "</p>\n");
    const char *mn[16];
    const int nm = model_notes(r, mn);
    for (int k = 0; k < r->nnotes + nm; k++) {
        fprintf(f, "<p>Note: ");
        html_escape(f, k < r->nnotes ? r->notes[k] : mn[k - r->nnotes]);
        fprintf(f, "</p>\n");
    }
    fprintf(f, "</body></html>\n");
}
