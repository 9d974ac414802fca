// Fuzzes network JSON (network_from_json): the input is the file's text. A network it accepts
// writes out (network_to_json) as text that reads back to the same network.
#include "nn/network_json.hpp"

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace convgrid;
  fuzz::only_input_errors("fuzz.json: ", [&] {
    const Network net = network_from_json(fuzz::as_text(data, size), "fuzz.json");
    const std::string text = network_to_json(net);
    fuzz::require(network_from_json(text, "written.json") == net,
                  "network_to_json does not read back: " + text);
  });
  return 0;
}
