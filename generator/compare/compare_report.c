/* The comparison as markdown, JSON (documented in docs/compare.md) and a
 * self-contained HTML page with SVG charts. */
#include <jansson.h>
#include <math.h>
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
        n += (size_t)snprintf(out + n, cap - n, " %s %s", t->name, t->mca_cpus[0] ? t->mca_cpus : "none");
        if (t->compare_bits && n < cap)
            n += (size_t)snprintf(out + n, cap - n, " at %d-bit vectors", t->compare_bits);
        if (n < cap)
            n += (size_t)snprintf(out + n, cap - n, "%s", isa + 1 < QG_ISA_COUNT ? ";" : ".");
    }
    if (n < cap)
        snprintf(out + n, cap - n, "%s",
                 " Elements per iteration come from the generator (vectors per iteration x lanes). Measured: this "
                 "machine, one thread, median of 7 runs of at least 20 ms at 65536 elements; foreign ISAs run under "
                 "qemu for correctness only, never timed; wasm runs under node, timed.");
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
    if (r->npeers) {
        fprintf(
            f, "Peers, measured here on the same element count:\n\n| op | peer | measured Melem/s |\n|---|---|---:|\n");
        for (int k = 0; k < r->npeers; k++)
            fprintf(f, "| %s | %s | %.0f |\n", qg_kernel_op_name(r->peers[k].op), r->peers[k].name,
                    r->peers[k].measured_melem_per_s);
        fprintf(f, "\n");
    }
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
    json_t *peers = json_array();
    for (int k = 0; k < r->npeers; k++) {
        json_t *o = json_object();
        json_object_set_new(o, "op", json_string(qg_kernel_op_name(r->peers[k].op)));
        json_object_set_new(o, "peer", json_string(r->peers[k].name));
        json_object_set_new(o, "measured_melem_per_s", json_real(r->peers[k].measured_melem_per_s));
        json_array_append_new(peers, o);
    }
    json_object_set_new(root, "peers", peers);
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

/* One line of an op's chart: an ISA (and llvm-mca model) with its C and
 * LLVM figures side by side. */
typedef struct chart_line {
    char label[48];
    double v[QG_BACKEND_COUNT];
    bool has[QG_BACKEND_COUNT];
} chart_line;

enum { CHART_MAX_LINES = 2 * QG_ISA_COUNT };

/* The lines of op's chart: measured Melem/s, or cycles per element of
 * every llvm-mca model; returns their count. */
static int chart_lines(const qg_compare_report *r, qg_kernel_op op, bool measured, chart_line *out) {
    int n = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        const qg_compare_row *w = &r->rows[i];
        for (int m = 0; w->op == op && m < (measured ? 1 : w->n_mca); m++) {
            if (measured ? !w->measured : !w->mca[m].ok)
                continue;
            char label[48];
            snprintf(label, sizeof label, measured ? "%s" : "%s @%s", qg_isa_name(w->isa), w->mca[m].cpu);
            int k = 0;
            while (k < n && strcmp(out[k].label, label) != 0)
                k++;
            if (k == n && n == CHART_MAX_LINES)
                continue;
            if (k == n)
                out[n++] = (chart_line){0};
            snprintf(out[k].label, sizeof out[k].label, "%s", label);
            out[k].v[w->backend] = measured ? w->measured_melem_per_s : w->mca[m].cycles_per_element;
            out[k].has[w->backend] = out[k].v[w->backend] > 0.0;
        }
    }
    return n;
}

/* A chart's scale: log10 from decade d0 to d1 over plot_w pixels. */
typedef struct chart_scale {
    int d0, d1, left, plot_w;
} chart_scale;

static double chart_x(const chart_scale *sc, double v) {
    return sc->left + (log10(v) - sc->d0) / (sc->d1 - sc->d0) * sc->plot_w;
}

/* One op's chart: a line per ISA (and model), C and LLVM bars one above
 * the other, on a log scale (scalar code and SIMD differences both show),
 * decades marked; the labels' column as wide as its longest label. */
static void svg_op_chart(FILE *f, const chart_line *l, int n, const char *unit) {
    double lo = 0.0, hi = 0.0;
    size_t longest = 0;
    for (int k = 0; k < n; k++) {
        longest = strlen(l[k].label) > longest ? strlen(l[k].label) : longest;
        for (int b = 0; b < QG_BACKEND_COUNT; b++)
            if (l[k].has[b]) {
                lo = lo == 0.0 || l[k].v[b] < lo ? l[k].v[b] : lo;
                hi = l[k].v[b] > hi ? l[k].v[b] : hi;
            }
    }
    chart_scale sc = {(int)floor(log10(lo)), (int)ceil(log10(hi)), 12 + (int)(7.5 * (double)longest), 420};
    if (sc.d1 <= sc.d0)
        sc.d1 = sc.d0 + 1;
    const int bar_h = 12, line_h = 2 * (bar_h + 2) + 8, top = 6, axis_y = top + n * line_h;
    const int width = sc.left + sc.plot_w + 110, height = axis_y + 52;
    static const char *const colors[QG_BACKEND_COUNT] = {"#3b6ea8", "#d9822b"};
    fprintf(f, "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\">\n",
            width, height);
    for (int d = sc.d0; d <= sc.d1; d++) { /* decade lines and their values */
        const double x = chart_x(&sc, pow(10.0, d));
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", x, top, x, axis_y);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%g</text>\n", x, axis_y + 14,
                pow(10.0, d));
    }
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n", sc.left, axis_y,
            sc.left + sc.plot_w, axis_y);
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%s (log scale)</text>\n",
            sc.left + sc.plot_w / 2, axis_y + 30, unit);
    for (int k = 0; k < n; k++) {
        const int y = top + k * line_h;
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\">", sc.left - 6, y + bar_h + 6);
        html_escape(f, l[k].label);
        fprintf(f, "</text>\n");
        for (int b = 0; b < QG_BACKEND_COUNT; b++) {
            if (!l[k].has[b])
                continue;
            const double x = chart_x(&sc, l[k].v[b]), len = x - sc.left > 1.0 ? x - sc.left : 1.0;
            const int yb = y + b * (bar_h + 2);
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n", sc.left, yb, len, bar_h,
                    colors[b]);
            fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\">%.*f</text>\n", sc.left + len + 4, yb + bar_h - 2,
                    l[k].v[b] >= 100.0 ? 0
                    : l[k].v[b] >= 1.0 ? 2
                                       : 3,
                    l[k].v[b]);
        }
    }
    for (int b = 0; b < QG_BACKEND_COUNT; b++) /* the legend */
        fprintf(f,
                "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                "<text x=\"%d\" y=\"%d\" font-size=\"12\">%s backend</text>\n",
                sc.left + 130 * b, axis_y + 38, colors[b], sc.left + 130 * b + 16, axis_y + 48, b ? "LLVM" : "C");
    fprintf(f, "</svg>\n");
}

/* A chart per op of one figure (ops without it skipped). */
static void svg_charts(FILE *f, const qg_compare_report *r, const char *title, const char *unit, bool measured) {
    fprintf(f, "<h2>");
    html_escape(f, title);
    fprintf(f, "</h2>\n");
    int charts = 0;
    for (qg_kernel_op op = 0; op < QG_K_OP_COUNT; op++) {
        chart_line lines[CHART_MAX_LINES];
        const int n = chart_lines(r, op, measured, lines);
        if (n == 0)
            continue;
        fprintf(f, "<h3>%s</h3>\n", qg_kernel_op_name(op));
        svg_op_chart(f, lines, n, unit);
        charts++;
    }
    if (charts == 0)
        fprintf(f, "<p>No figures.</p>\n");
}

void qg_compare_write_html(const qg_compare_report *r, FILE *f) {
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>qgen compare: %s</title>\n",
            r->spec.name);
    fprintf(f, "<style>body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse;"
               "font-size:12px}td,th{border:1px solid #ccc;padding:3px 6px;text-align:left}"
               "th{background:#eee}td.n{text-align:right}.bad{color:#b00;font-weight:bold}</style>\n");
    fprintf(f, "</head><body>\n<h1>qgen compare: spec <code>%s</code></h1>\n", r->spec.name);
    fprintf(f, "<p>qgen %s, LLVM %s.</p>\n", QGEN_VERSION, r->llvm_version);
    svg_charts(f, r, "Static estimate: cycles per element (llvm-mca, every model; lower is better)",
               "cycles per element", false);
    svg_charts(f, r, "Measured on this machine: Melem/s (median; higher is better)", "Melem/s", true);
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
    fprintf(f, "</table>\n");
    if (r->npeers) {
        fprintf(f, "<h2>Peers, measured here on the same element count</h2>\n<table>\n<tr><th>op</th><th>peer</th>"
                   "<th>measured Melem/s</th></tr>\n");
        for (int k = 0; k < r->npeers; k++) {
            fprintf(f, "<tr><td>%s</td><td>", qg_kernel_op_name(r->peers[k].op));
            html_escape(f, r->peers[k].name);
            fprintf(f, "</td><td class=\"n\">%.0f</td></tr>\n", r->peers[k].measured_melem_per_s);
        }
        fprintf(f, "</table>\n");
    }
    fprintf(f, "<p>");
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
