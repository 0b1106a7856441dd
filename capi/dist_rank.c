// The public shims of the rank-part functions (include/graphferry.h, "Rank
// parts"), as graphferry.c defines the others: fork guard (guard.h), then
// the Go export.

#include "graphferry.h"
#include "guard.h"
#include "shim.h"
#include "_cgo_export.h"

int gf_part_open(const char *dir, int32_t rank, uint32_t flags, gf_part **out_part) {
  GF_GUARD();
  return gfgo_part_open((char *)dir, rank, flags, (uintptr_t *)out_part);
}

void gf_part_close(gf_part *part) {
  GF_GUARD_VOID();
  if (part != NULL) {
    gfgo_part_close((uintptr_t)part);
  }
}

int gf_part_get_info(gf_part *part, gf_part_info *out_info) {
  GF_GUARD();
  return gfgo_part_get_info((uintptr_t)part, out_info);
}

int gf_part_owned_nodes(gf_part *part, DLManagedTensor **out_tensor) {
  GF_GUARD();
  return gfgo_part_owned_nodes((uintptr_t)part, out_tensor);
}

int gf_part_get_node_data(gf_part *part, const char *name, DLManagedTensor **out_tensor) {
  GF_GUARD();
  return gfgo_part_get_node_data((uintptr_t)part, (char *)name, out_tensor);
}

int gf_part_node_data_names(gf_part *part, char **out_names) {
  GF_GUARD();
  return gfgo_part_node_data_names((uintptr_t)part, out_names);
}

int gf_loader_open_part(gf_part *part, const DLTensor *seeds,
                        const gf_loader_options *options, const gf_comm *comm,
                        gf_loader **out_loader) {
  GF_GUARD();
  return gfgo_loader_open_part((uintptr_t)part, (DLTensor *)seeds,
                               (gf_loader_options *)options, (gf_comm *)comm,
                               (uintptr_t *)out_loader);
}

int gf_part_set_node_time(gf_part *part, const DLTensor *time, const gf_comm *comm) {
  GF_GUARD();
  return gfgo_part_set_node_time((uintptr_t)part, (DLTensor *)time, (gf_comm *)comm);
}

int gf_part_set_edge_time(gf_part *part, const DLTensor *time) {
  GF_GUARD();
  return gfgo_part_set_edge_time((uintptr_t)part, (DLTensor *)time);
}
