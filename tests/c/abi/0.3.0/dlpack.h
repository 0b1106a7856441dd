/*
 * dlpack.h - the DLPack 1.1 tensor-exchange ABI, as graphferry uses it.
 *
 * DLPack (https://github.com/dmlc/dlpack, include/dlpack/dlpack.h, Apache
 * License 2.0) defines the structs and enum values below; they are an ABI
 * shared by every framework that speaks DLPack, so their layouts and values
 * here are exactly DLPack 1.1's. The declarations and comments are
 * graphferry's own writing of that ABI (no upstream text is reproduced).
 *
 * The include guard is DLPack's own, so the two headers are interchangeable:
 * whichever of this file and an upstream dlpack.h (1.x) a program includes
 * first is used and the other is skipped. graphferry.h checks that the
 * DLPack it sees has major version 1.
 *
 * C99 and C++.
 */
#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_

#ifdef __cplusplus
#define DLPACK_EXTERN_C extern "C"
#else
#define DLPACK_EXTERN_C
#endif

/* The DLPack version of these declarations. */
#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 1

/* Declares exported functions on Windows; empty elsewhere. */
#ifdef _WIN32
#ifdef DLPACK_EXPORTS
#define DLPACK_DLL __declspec(dllexport)
#else
#define DLPACK_DLL __declspec(dllimport)
#endif
#else
#define DLPACK_DLL
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * DLPackVersion is the version a DLManagedTensorVersioned was made with. A
 * consumer that finds another major version than its own must not read any
 * field but call the deleter; a higher minor version only adds enum values.
 */
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

/* DLDeviceType: where a tensor's memory lives. Values never change. */
#ifdef __cplusplus
typedef enum : int32_t {
#else
typedef enum {
#endif
  kDLCPU = 1,          /* host memory */
  kDLCUDA = 2,         /* CUDA device memory */
  kDLCUDAHost = 3,     /* pinned host memory (cudaMallocHost) */
  kDLOpenCL = 4,       /* OpenCL */
  kDLVulkan = 7,       /* Vulkan buffer */
  kDLMetal = 8,        /* Apple Metal */
  kDLVPI = 9,          /* Verilog simulator buffer */
  kDLROCM = 10,        /* AMD ROCm device memory */
  kDLROCMHost = 11,    /* pinned host memory (hipMallocHost) */
  kDLExtDev = 12,      /* reserved for experimental devices */
  kDLCUDAManaged = 13, /* CUDA managed memory (cudaMallocManaged) */
  kDLOneAPI = 14,      /* oneAPI unified shared memory */
  kDLWebGPU = 15,      /* WebGPU */
  kDLHexagon = 16,     /* Qualcomm Hexagon DSP */
  kDLMAIA = 17,        /* Microsoft MAIA */
  kDLTrn = 18          /* AWS Trainium */
} DLDeviceType;

/* DLDevice: a device type and the device's index (0 for host memory). */
typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

/* DLDataTypeCode: the kind of a DLDataType. Values never change. */
typedef enum {
  kDLInt = 0U,                 /* signed integer */
  kDLUInt = 1U,                /* unsigned integer */
  kDLFloat = 2U,               /* IEEE floating point */
  kDLOpaqueHandle = 3U,        /* opaque handle (testing only) */
  kDLBfloat = 4U,              /* bfloat16 */
  kDLComplex = 5U,             /* complex: pairs of floats */
  kDLBool = 6U,                /* boolean, one byte each */
  kDLFloat8_e3m4 = 7U,         /* 8-bit floating-point formats */
  kDLFloat8_e4m3 = 8U,
  kDLFloat8_e4m3b11fnuz = 9U,
  kDLFloat8_e4m3fn = 10U,
  kDLFloat8_e4m3fnuz = 11U,
  kDLFloat8_e5m2 = 12U,
  kDLFloat8_e5m2fnuz = 13U,
  kDLFloat8_e8m0fnu = 14U,
  kDLFloat6_e2m3fn = 15U,      /* 6-bit floating-point formats */
  kDLFloat6_e3m2fn = 16U,
  kDLFloat4_e2m1fn = 17U       /* 4-bit floating-point format */
} DLDataTypeCode;

/*
 * DLDataType: code is a DLDataTypeCode (kept in one byte), bits the width of
 * one lane, lanes the vector width (1 for scalars). float32 is {2, 32, 1};
 * bool is {6, 8, 1}.
 */
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

/*
 * DLTensor describes a tensor without owning it. data (NULL for a tensor of
 * no elements) plus byte_offset is the first element; shape has ndim
 * entries; strides, counted in elements, has ndim entries or is NULL for a
 * compact row-major tensor.
 */
typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
} DLTensor;

/*
 * DLManagedTensor is the legacy (pre-1.0, unversioned) owned tensor: the
 * receiver calls deleter(self) once when done, which frees the data and the
 * struct itself. deleter may be NULL when nothing needs freeing.
 * Superseded by DLManagedTensorVersioned; kept for consumers that only know
 * this one (torch before 2.9, for one).
 */
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

/* Bits of DLManagedTensorVersioned.flags. */
/* The consumer must not write to the tensor's memory. */
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
/* The memory was made for this tensor alone (a copy): until the deleter
   runs, the consumer is its only user and may write to it. */
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
/* Elements of a sub-byte dtype are padded to a byte each, not packed. */
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

/*
 * DLManagedTensorVersioned is the owned tensor of DLPack 1.x. version comes
 * first and the fields up to flags keep their places in every later
 * version, so a consumer can always find the deleter: it calls
 * deleter(self) once when done, which frees the data and the struct itself.
 */
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned *self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

#ifdef __cplusplus
}
#endif

#endif /* DLPACK_DLPACK_H_ */
