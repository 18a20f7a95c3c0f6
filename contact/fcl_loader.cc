// contact::FclApi() for the command line (fcl_backend.h): the module libsaltus_fcl.so, opened on
// the first call; its functions are found by the name saltus_fcl_api and must be of this
// build's SALTUS_FCL_ABI_VERSION (fcl_module.h). It is looked for, in this order, at
//   1. $SALTUS_FCL_MODULE, if set (then only there);
//   2. for the program built in the build tree (tools/saltus), the module built there
//      (contact/libsaltus_fcl.so: SALTUS_FCL_MODULE_BUILD_PATH); otherwise the install layout
//      relative to the program (bin/../lib/saltus/: SALTUS_FCL_MODULE_RELATIVE_PATH), which holds
//      wherever the prefix was installed;
//   3. the install prefix given at configure time (SALTUS_FCL_MODULE_INSTALL_PATH).
// The first path that exists is opened; if none does, or it cannot be opened, Fcl() throws
// std::runtime_error naming every path tried.
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "contact/fcl_backend.h"

namespace saltus::contact {
namespace {

std::atomic<bool> loaded{false};

std::vector<std::string> Candidates() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("SALTUS_FCL_MODULE"); env != nullptr && *env != '\0') {
    paths.emplace_back(env);
    return paths;
  }
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path build = SALTUS_FCL_MODULE_BUILD_PATH;
    if (self.parent_path().parent_path() == build.parent_path().parent_path()) {
      paths.push_back(build.string());
    } else {
      paths.push_back(
          (self.parent_path() / SALTUS_FCL_MODULE_RELATIVE_PATH).lexically_normal().string());
    }
  }
  paths.emplace_back(SALTUS_FCL_MODULE_INSTALL_PATH);
  return paths;
}

const SaltusFclApi* Load() {
  static std::once_flag once;
  static const SaltusFclApi* backend = nullptr;
  static std::string error;
  std::call_once(once, [] {
    std::string tried;
    for (const std::string& path : Candidates()) {
      std::error_code ec;
      if (!std::filesystem::exists(path, ec)) {
        tried += "\n  " + path + ": not found";
        continue;
      }
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        const char* message = dlerror();
        tried += "\n  " + path + ": " + (message != nullptr ? message : "unknown error");
        continue;
      }
      using Entry = const SaltusFclApi* (*)();
      auto entry = reinterpret_cast<Entry>(dlsym(handle, "saltus_fcl_api"));
      if (entry == nullptr) {
        tried += "\n  " + path + ": no function saltus_fcl_api";
        continue;
      }
      const SaltusFclApi* api = entry();
      if (api == nullptr || api->abi_version != SALTUS_FCL_ABI_VERSION) {
        tried += "\n  " + path + ": interface version " +
                 std::to_string(api ? api->abi_version : -1) + ", this program needs " +
                 std::to_string(SALTUS_FCL_ABI_VERSION);
        continue;
      }
      backend = api;
      break;
    }
    if (backend == nullptr)
      error = "the FCL module (3D shapes) could not be loaded; tried:" + tried;
    loaded = backend != nullptr;
  });
  if (backend == nullptr) throw std::runtime_error(error);
  return backend;
}

}  // namespace

const SaltusFclApi& FclApi() { return *Load(); }

bool FclLoaded() { return loaded; }

}  // namespace saltus::contact
