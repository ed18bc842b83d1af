// CUDA graphs (over libtorch's own at::cuda::CUDAGraph) and kernels compiled at run time, for rlgraph-rs's tch
// backend. Built as a shared library by build.rs (feature `cuda-shim`) and opened at run time
// after libtorch_cuda.so, so a binary links nothing CUDA and runs on CPU-only machines too.
//
// Every function that can fail returns NULL on success or a message the caller frees with
// rg_cuda_graph_free_message: a C++ exception must not cross into Rust.
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>

namespace {

char* message(const char* what) { return strdup(what); }

// Runs `body`; NULL if it returned, else the exception's message (`what` names the call).
template <typename F>
char* guarded(const char* what, F&& body) {
  try {
    body();
    return nullptr;
  } catch (const std::exception& e) {
    return message(e.what());
  } catch (...) {
    return message((std::string("unknown C++ exception in ") + what).c_str());
  }
}

}  // namespace

// A graph and, while it records, its device and the side stream it records on: libtorch refuses
// to capture on a device's default stream, every op the caller launches meanwhile goes to the
// current one, and capture_end must find the same stream current.
struct RgCudaGraph {
  at::cuda::CUDAGraph graph;
  std::optional<c10::cuda::CUDAGuard> on_device;
  std::optional<c10::cuda::CUDAStreamGuard> recording;
};

// Ends a capture that capture_end could not end, so the stream is usable again and the error
// does not surface in the next libtorch op.
static void abandon_capture() {
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
    cudaGraph_t partial = nullptr;
    cudaStreamEndCapture(stream, &partial);
    if (partial) cudaGraphDestroy(partial);
  }
  (void)cudaGetLastError();
}

extern "C" {

char* rg_cuda_graph_begin(int device, RgCudaGraph** out) {
  *out = nullptr;
  return guarded("capture_begin", [&] {
    auto index = static_cast<c10::DeviceIndex>(device);
    auto graph = std::make_unique<RgCudaGraph>();
    graph->on_device.emplace(index);
    // Work queued before the capture must not be recorded, nor run after it.
    c10::cuda::device_synchronize();
    graph->recording.emplace(c10::cuda::getStreamFromPool(false, index));
    // Thread-local: another thread's allocations during the capture do not invalidate it.
    graph->graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
    *out = graph.release();
  });
}

char* rg_cuda_graph_end(RgCudaGraph* g) {
  char* error = guarded("capture_end", [&] { g->graph.capture_end(); });
  if (error) abandon_capture();
  g->recording.reset();
  g->on_device.reset();
  return error;
}

char* rg_cuda_graph_replay(RgCudaGraph* g) {
  return guarded("replay", [&] { g->graph.replay(); });
}

void rg_cuda_graph_free(RgCudaGraph* g) { delete g; }

void rg_cuda_graph_free_message(char* m) { free(m); }

}  // extern "C"

// ---- Kernels compiled at run time: NVRTC turns CUDA C++ source into PTX, the driver loads it
// and launches it on libtorch's current stream (so a CUDA graph records it like any op).
// NVRTC and the driver are opened with dlopen: nothing here is linked.

#include <dlfcn.h>

#include <string>
#include <vector>

namespace {

using NvrtcProgram = void*;
using CuModule = void*;
using CuFunction = void*;

struct Nvrtc {
  int (*create)(NvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
  int (*compile)(NvrtcProgram, int, const char* const*);
  int (*log_size)(NvrtcProgram, size_t*);
  int (*log)(NvrtcProgram, char*);
  int (*ptx_size)(NvrtcProgram, size_t*);
  int (*ptx)(NvrtcProgram, char*);
  int (*destroy)(NvrtcProgram*);
  const char* (*error_string)(int);
};

struct Driver {
  int (*load)(CuModule*, const void*);
  int (*function)(CuFunction*, CuModule, const char*);
  int (*launch)(CuFunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**, void**);
  int (*error_string)(int, const char**);
};

template <typename F>
void bind(void* lib, const char* name, F& slot) {
  slot = reinterpret_cast<F>(dlsym(lib, name));
  if (!slot) throw std::runtime_error(std::string("no ") + name + " in the library opened for it");
}

// The folder libtorch's CUDA libraries live in: NVRTC's wheel sits beside torch's in site-packages.
std::string torch_lib_dir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&c10::cuda::device_synchronize), &info) && info.dli_fname) {
    std::string path(info.dli_fname);
    return path.substr(0, path.rfind('/'));
  }
  return ".";
}

void* open_first(const std::vector<std::string>& candidates, const char* what) {
  std::string tried;
  for (const auto& path : candidates) {
    if (void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
    tried += " " + path;
  }
  throw std::runtime_error(std::string("cannot open ") + what + "; tried" + tried);
}

const Nvrtc& nvrtc() {
  static const Nvrtc api = [] {
    std::string dir = torch_lib_dir();
    // Torch's own NVRTC first: a newer system one could emit PTX the driver cannot load.
    void* lib = open_first({dir + "/../../nvidia/cu13/lib/libnvrtc.so.13", dir + "/../../nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
                            "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"},
                           "NVRTC (libnvrtc)");
    Nvrtc n{};
    bind(lib, "nvrtcCreateProgram", n.create);
    bind(lib, "nvrtcCompileProgram", n.compile);
    bind(lib, "nvrtcGetProgramLogSize", n.log_size);
    bind(lib, "nvrtcGetProgramLog", n.log);
    bind(lib, "nvrtcGetPTXSize", n.ptx_size);
    bind(lib, "nvrtcGetPTX", n.ptx);
    bind(lib, "nvrtcDestroyProgram", n.destroy);
    bind(lib, "nvrtcGetErrorString", n.error_string);
    return n;
  }();
  return api;
}

const Driver& driver() {
  static const Driver api = [] {
    void* lib = open_first({"libcuda.so.1", "libcuda.so"}, "the CUDA driver (libcuda)");
    Driver d{};
    bind(lib, "cuModuleLoadData", d.load);
    bind(lib, "cuModuleGetFunction", d.function);
    bind(lib, "cuLaunchKernel", d.launch);
    bind(lib, "cuGetErrorString", d.error_string);
    return d;
  }();
  return api;
}

void check_driver(int status, const char* what) {
  if (status == 0) return;
  const char* text = nullptr;
  driver().error_string(status, &text);
  throw std::runtime_error(std::string(what) + ": " + (text ? text : "unknown CUDA driver error"));
}

}  // namespace

struct RgKernel {
  CuModule module;
  CuFunction function;
};

extern "C" {

char* rg_kernel_compile(int device, const char* source, const char* name, RgKernel** out) {
  *out = nullptr;
  return guarded("rg_kernel_compile", [&] {
    c10::cuda::CUDAGuard on_device(static_cast<c10::DeviceIndex>(device));
    // The driver needs the device's context current on this thread, as libtorch leaves it.
    c10::cuda::device_synchronize();
    int major = 0, minor = 0;
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    std::string arch = "--gpu-architecture=compute_" + std::to_string(major * 10 + minor);
    // No fused multiply-adds: each op rounds on its own, as in libtorch's one-op kernels.
    const char* options[] = {arch.c_str(), "--fmad=false", "--std=c++17"};
    const Nvrtc& n = nvrtc();
    NvrtcProgram program = nullptr;
    int status = n.create(&program, source, "rlgraph_kernel.cu", 0, nullptr, nullptr);
    if (status != 0) throw std::runtime_error(std::string("nvrtcCreateProgram: ") + n.error_string(status));
    status = n.compile(program, 3, options);
    if (status != 0) {
      size_t size = 0;
      n.log_size(program, &size);
      std::string log(size, '\0');
      n.log(program, log.data());
      n.destroy(&program);
      throw std::runtime_error(std::string("NVRTC could not compile kernel ") + name + ": " + log);
    }
    size_t size = 0;
    n.ptx_size(program, &size);
    std::string ptx(size, '\0');
    n.ptx(program, ptx.data());
    n.destroy(&program);
    auto kernel = std::make_unique<RgKernel>();
    check_driver(driver().load(&kernel->module, ptx.c_str()), "cuModuleLoadData");
    check_driver(driver().function(&kernel->function, kernel->module, name), "cuModuleGetFunction");
    *out = kernel.release();
  });
}

char* rg_kernel_launch(RgKernel* k, int device, unsigned grid, unsigned block, void** args) {
  return guarded("cuLaunchKernel", [&] {
    auto index = static_cast<c10::DeviceIndex>(device);
    c10::cuda::CUDAGuard on_device(index);
    auto stream = c10::cuda::getCurrentCUDAStream(index).stream();
    check_driver(driver().launch(k->function, grid, 1, 1, block, 1, 1, 0, stream, args, nullptr), "cuLaunchKernel");
  });
}

// The module stays loaded: kernels live as long as the program, and a graph may hold them.
void rg_kernel_free(RgKernel* k) { delete k; }

}  // extern "C"
