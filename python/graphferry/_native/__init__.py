"""The native bindings, the bottom of the package: nothing here imports the
rest of graphferry (but :mod:`graphferry.errors` and the version).

* :mod:`.backend` chooses the library this process loads (the CPU or the CUDA
  build) and fences the CUDA one: standard library only.
* :mod:`.lib` loads it and holds every ``ctypes`` declaration of the package:
  the functions, structs and constants of include/graphferry.h, the dlpack.h
  structs, the CUDA library's hooks and the capsule functions of Python's C API.
* :mod:`.dlpack` moves tensors across: library outputs to torch, torch and
  NumPy inputs to ``DLTensor`` structs, without copies.
"""
