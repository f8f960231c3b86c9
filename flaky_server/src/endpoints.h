#pragma once
// What each lab and scenario path does. Admin paths are in http_server.cpp.

#include <httplib.h>

#include "cb/flaky/record.h"
#include "connection.h"

namespace cb::flaky {

class HttpServer;

struct Call {
  const httplib::Request& req;
  httplib::Response& res;
  Connection& conn;
  HttpServer& server;
  const Arrival& arrival;
  Outcome outcome = Outcome::Answered;
};

// Answers a lab or scenario request (any path but /admin/*); sets call.outcome when the answer
// is not a plain response.
void serve_endpoint(Call& call);

}  // namespace cb::flaky
