#pragma once
// Test-only: a flaky server in this process on a free port, stopped when the test ends.

#include <memory>
#include <string>

#include "cb/flaky/server.h"

namespace cb::testing {

struct Flaky {
  std::unique_ptr<flaky::FlakyServer> server;
  std::string url;
  Flaky() {
    flaky::ServerOptions o;
    o.port = 0;
    server = flaky::FlakyServer::start(o).value();
    url = server->url();
  }
};

}  // namespace cb::testing
