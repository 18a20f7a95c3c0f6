// Helpers shared by the Siconos bench drivers (C++17, Siconos 4.4 kernel).
#pragma once

#include <siconos/kernel/SiconosException.hpp>

#include <boost/exception/get_error_info.hpp>
#include <exception>
#include <string>

namespace saltus::bench {

// The message of a Siconos exception (its extra_message), else what().
inline std::string ExceptionMessage(const std::exception& e) {
  if (const auto* siconos = dynamic_cast<const Siconos::exception*>(&e)) {
    if (const std::string* m = boost::get_error_info<Siconos::exception::extra_message>(*siconos)) {
      return *m;
    }
  }
  return e.what();
}

}  // namespace saltus::bench
