// Fuzzes machine profile files (read_profile): the input is the file. A profile it accepts
// writes out (profile_to_json) as JSON that reads back to the same profile.
#include "model/machine_profile.hpp"

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace convgrid;
  static const fuzz::InputFile file("profile.json");
  const std::string& path = file.write(data, size);
  fuzz::only_input_errors(path, [&] {
    const MachineProfile p = read_profile(path);
    const nlohmann::json written = nlohmann::json::parse(profile_to_json(p).dump());
    fuzz::require(profile_from_json(written, "written") == p,
                  "profile_to_json does not read back: " + written.dump());
  });
  return 0;
}
