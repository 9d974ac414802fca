// Fuzzes ConvShape::parse: any text is a shape or an InputError starting "shape: "; a shape it
// accepts prints as a string that parses back to the same shape.
#include "convgrid/conv_shape.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace convgrid;
  fuzz::only_input_errors("shape: ", [&] {
    const ConvShape s = ConvShape::parse(fuzz::as_text(data, size));
    fuzz::require(ConvShape::parse(s.to_string()) == s,
                  "to_string does not parse back: " + s.to_string());
    fuzz::require(s.flops() > 0 && s.output_elems() > 0, "a shape with no work: " + s.to_string());
  });
  return 0;
}
