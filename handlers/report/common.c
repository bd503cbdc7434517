/* common.c - what the report's HTML, SVG and CSV writers share: HTML
 * escaping, the readers of store_report_capacity()'s JSON, number
 * formatting and the bandwidth figures' reference rules. They all write
 * into a lib/sbuf.h buffer.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers/report/report_int.h"

/* Text for HTML element content and quoted attributes. Control
 * characters (never valid in HTML) and bidirectional controls become
 * U+FFFD. At most max_chars code
 * points, then an ellipsis (max_chars 0: no limit).
 */
/* 1 when s starts with a Unicode bidirectional control in UTF-8: LRM and
 * RLM (U+200E-F), the embeddings and overrides (U+202A-E) and the isolates
 * (U+2066-9), which reorder the text after them (Trojan Source, CVE-2021-
 * 42574). */
static int bidi_control(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	if (u[0] != 0xE2 || !u[1] || !u[2])
		return 0;
	return (u[1] == 0x80 && (u[2] == 0x8E || u[2] == 0x8F ||
				 (u[2] >= 0xAA && u[2] <= 0xAE))) ||
	       (u[1] == 0x81 && u[2] >= 0xA6 && u[2] <= 0xA9);
}

void rpt_esc_n(struct sbuf *b, const char *s, size_t max_chars)
{
	size_t chars = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c & 0xC0) != 0x80 && max_chars && chars++ == max_chars) {
			sbuf_put(b, "\xE2\x80\xA6"); /* ... */
			return;
		}
		switch (c) {
		case '&':
			sbuf_put(b, "&amp;");
			break;
		case '<':
			sbuf_put(b, "&lt;");
			break;
		case '>':
			sbuf_put(b, "&gt;");
			break;
		case '"':
			sbuf_put(b, "&quot;");
			break;
		case '\'':
			sbuf_put(b, "&#39;");
			break;
		default:
			if (c < 0x20 || c == 0x7F) {
				sbuf_put(b, "\xEF\xBF\xBD");
			} else if (bidi_control(s)) {
				/* a name must not reorder the rest of its
				 * cell or row */
				sbuf_put(b, "\xEF\xBF\xBD");
				s += 2;
			} else {
				sbuf_putn(b, s, 1);
			}
		}
	}
}

void rpt_esc(struct sbuf *b, const char *s)
{
	rpt_esc_n(b, s, 0);
}

/* ---- reading the report's JSON --------------------------------------- */

const char *rpt_jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* 1 and *v when o[k] is a number. */
int rpt_jnum(const json_t *o, const char *k, double *v)
{
	const json_t *x = json_object_get(o, k);

	if (!json_is_number(x))
		return 0;
	*v = json_number_value(x);
	return isfinite(*v);
}

long long rpt_jint(const json_t *o, const char *k)
{
	double v;
	return rpt_jnum(o, k, &v) ? (long long)llround(v) : 0;
}

/* Number with thousands separators for |v| >= 1000, whole numbers as
 * such, else 3 significant digits: 3,011 / 783 / 64 / 51.2 / 2.40.
 */
static void fmt_num(char *out, size_t n, double v)
{
	double a = fabs(v);

	if (a >= 1000 && a < 1e15) {
		char digits[32];
		size_t len, j = 0;
		int lead;
		snprintf(digits, sizeof(digits), "%.0f", a);
		len = strlen(digits);
		lead = (int)(len % 3 ? len % 3 : 3);
		if (v < 0 && j + 1 < n)
			out[j++] = '-';
		for (size_t i = 0; i < len && j + 2 < n; i++) {
			if (i && (int)((i - (size_t)lead) % 3) == 0 &&
			    i >= (size_t)lead)
				out[j++] = ',';
			out[j++] = digits[i];
		}
		out[j] = '\0';
	} else if (a >= 100 || a == floor(a)) {
		snprintf(out, n, "%.0f", v);
	} else if (a >= 10) {
		snprintf(out, n, "%.1f", v);
	} else {
		snprintf(out, n, "%.2f", v);
	}
}

void rpt_num(struct sbuf *b, double v)
{
	char t[48];
	fmt_num(t, sizeof(t), v);
	sbuf_put(b, t);
}

/* A GPU type's name for people: the catalog's display name, or for GPUs
 * the catalog does not know (fleet key "nvml:<name>") the NVML name.
 */
void rpt_type_name(struct sbuf *b, const json_t *d, const char *key,
		   size_t max_chars)
{
	const char *disp = json_string_value(
	    json_object_get(json_object_get(d, "catalog"), key));
	if (disp && *disp)
		rpt_esc_n(b, disp, max_chars);
	else if (!strncmp(key, "nvml:", 5))
		rpt_esc_n(b, key + 5, max_chars);
	else
		rpt_esc_n(b, key, max_chars);
}

/* A round axis maximum and step for values up to max (~5 ticks). */
double rpt_nice_step(double max, int ticks)
{
	double raw, mag, f;

	if (!(max > 0))
		max = 1;
	raw = max / ticks;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	return (f <= 1	   ? 1
		: f <= 2   ? 2
		: f <= 2.5 ? 2.5
		: f <= 5   ? 5
			   : 10) *
	       mag;
}

/* ---- the measured figures -------------------------------------------- */

const struct bw_row rpt_bw_rows[] = {
    {"hbm_read_gbps", "HBM read", 1},
    {"hbm_write_gbps", "HBM write", 1},
    {"hbm_copy_gbps", "HBM copy (kernel)", 0},
    {"hbm_copy_ce_gbps", "HBM copy (engine)", 0},
    {"h2d_pinned_gbps", "Host \xE2\x86\x92 GPU", 0},
    {"d2h_pinned_gbps", "GPU \xE2\x86\x92 host", 0},
    {"bidir_pinned_gbps", "Host \xE2\x86\x94 GPU", 0},
    {"p2p_unidir_gbps", "GPU \xE2\x86\x92 GPU", 0},
    {"p2p_bidir_gbps", "GPU \xE2\x86\x94 GPU", 0},
    {NULL, NULL, 0},
};

/* What a measurement is compared with: the catalog's datasheet for GEMM
 * and HBM read/write, otherwise the limit the probe derived (HBM/2 for
 * copies counted once, PCIe from NVML, NVLink links x speed). Returns the
 * basis ("datasheet", "limit") or NULL when there is none.
 */
const char *rpt_reference(const json_t *m, int datasheet_first, double *ref)
{
	if (datasheet_first && rpt_jnum(m, "datasheet", ref) && *ref > 0)
		return "datasheet";
	if (rpt_jnum(m, "limit", ref) && *ref > 0)
		return "limit";
	return NULL;
}

int rpt_datasheet_first(const char *metric)
{
	if (!strcmp(metric, "gemm_tflops"))
		return 1;
	for (int i = 0; rpt_bw_rows[i].metric; i++)
		if (!strcmp(rpt_bw_rows[i].metric, metric))
			return rpt_bw_rows[i].datasheet_first;
	return 0;
}
