// The one translation unit compiled to PTX (and by the host emulator).
#include "sample.cu"
#include "scan.cu"
#include "unique.cu"
#include "gather.cu"
