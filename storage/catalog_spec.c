/* catalog_spec.c - store_gpu_get_spec (catalog.h): a catalog row as typed
 * figures. No SQL here: it reads the row store_gpu_get returns, so the
 * fuzz harnesses (tests/fuzz/fuzz.mk), whose store_gpu_get is a stub, link
 * this same conversion.
 */
#include <stdio.h>
#include <string.h>

#include "storage/catalog.h"

/* A row's number (0 when null or absent) and text ("" when null). */
static double row_num(const json_t *row, const char *key)
{
	const json_t *v = json_object_get(row, key);
	return json_is_number(v) ? json_number_value(v) : 0;
}

static void row_text(const json_t *row, const char *key, char *out, size_t len)
{
	const char *v = json_string_value(json_object_get(row, key));
	snprintf(out, len, "%s", v ? v : "");
}

enum store_status store_gpu_get_spec(struct db_pool *pool, const char *name,
				     struct store_gpu *out, struct store_err *e)
{
	json_t *row = NULL;
	enum store_status st = store_gpu_get(pool, name, &row, e);

	memset(out, 0, sizeof(*out));
	if (st != STORE_OK)
		return st;
	out->memory_gib = row_num(row, "memory_gib");
	out->memory_bandwidth_gbps = row_num(row, "memory_bandwidth_gbps");
	out->fp64_tflops = row_num(row, "fp64_tflops");
	out->fp32_tflops = row_num(row, "fp32_tflops");
	out->tf32_tflops = row_num(row, "tf32_tflops");
	out->fp16_tflops = row_num(row, "fp16_tflops");
	out->bf16_tflops = row_num(row, "bf16_tflops");
	out->fp8_tflops = row_num(row, "fp8_tflops");
	out->int8_tops = row_num(row, "int8_tops");
	out->intra_node_gbps = row_num(row, "intra_node_gbps");
	out->inter_node_gbps = row_num(row, "inter_node_gbps");
	out->price_per_gpu_hour = row_num(row, "price_per_gpu_hour");
	out->gemm_peak_fraction = row_num(row, "gemm_peak_fraction");
	out->max_gpus_per_node = (int)row_num(row, "max_gpus_per_node");
	out->pcie_gen = (int)row_num(row, "pcie_gen");
	out->pcie_width = (int)row_num(row, "pcie_width");
	out->power_w = row_num(row, "power_w");
	row_text(row, "name", out->name, sizeof(out->name));
	row_text(row, "compute_capability", out->compute_capability,
		 sizeof(out->compute_capability));
	row_text(row, "intra_node_link", out->intra_node_link,
		 sizeof(out->intra_node_link));
	row_text(row, "efficiency_basis", out->efficiency_basis,
		 sizeof(out->efficiency_basis));
	json_decref(row);
	return STORE_OK;
}
