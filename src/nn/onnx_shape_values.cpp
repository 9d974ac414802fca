// Shape values of onnx_shape_values.hpp: each operator on small row-major integer tensors.
#include "nn/onnx_shape_values.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>

#include "convgrid/error.hpp"

namespace convgrid {

std::string to_string(const ShapeValue& v);

namespace {

using Ints = std::vector<int64_t>;

[[noreturn]] void refuse(const std::string& what) { throw InputError(what); }

std::string text(const ShapeElement& e) {
  if (!e.batch) return std::to_string(e.value);
  return e.value == 1 ? "N" : fmt::format("{}*N", e.value);
}

// The elements of a tensor of extents `dims`: InputError for a negative extent or more than
// kMaxShapeElements of them.
int64_t count_of(const Ints& dims) {
  if (std::ranges::any_of(dims, [](int64_t d) { return d < 0; }))
    refuse(fmt::format("extents [{}] are negative", fmt::join(dims, ",")));
  if (std::ranges::find(dims, 0) != dims.end()) return 0;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d > kMaxShapeElements / n)
      refuse(fmt::format("a shape value of extents [{}] has more than {} elements", fmt::join(dims, ","),
                         kMaxShapeElements));
    n *= d;
  }
  return n;
}

ShapeValue vector_of(const Ints& values) {
  ShapeValue v{{static_cast<int64_t>(values.size())}, {}};
  for (int64_t x : values) v.values.push_back({x, false});
  return v;
}

void refuse_overflow(bool overflow, const ShapeElement& a, char op, const ShapeElement& b) {
  if (overflow) refuse(fmt::format("{} {} {} overflows", text(a), op, text(b)));
}

// a op b, for the four arithmetic operators; N times a number stays so under + and - with
// another such and under * and / by a number.
ShapeElement apply(char op, const ShapeElement& a, const ShapeElement& b) {
  int64_t r = 0;
  bool batch = a.batch || b.batch;
  switch (op) {
    case '+':
    case '-':
      if (a.batch != b.batch && (a.batch ? b.value : a.value) != 0)
        refuse(fmt::format("{} {} {} adds a number to the batch N", text(a), op, text(b)));
      refuse_overflow(op == '+' ? __builtin_add_overflow(a.value, b.value, &r)
                                : __builtin_sub_overflow(a.value, b.value, &r),
                      a, op, b);
      break;
    case '*':
      if (a.batch && b.batch) refuse(fmt::format("{} * {} is not N times a number", text(a), text(b)));
      refuse_overflow(__builtin_mul_overflow(a.value, b.value, &r), a, op, b);
      break;
    default:  // '/': integer division (truncating), N * a / N * b only when exact
      if (b.value == 0) refuse(fmt::format("{} / {} divides by zero", text(a), text(b)));
      if (b.batch && !a.batch) refuse(fmt::format("{} / {} divides by the batch N", text(a), text(b)));
      if (a.value == std::numeric_limits<int64_t>::min() && b.value == -1)
        refuse(fmt::format("{} / {} overflows", text(a), text(b)));
      if (a.batch && a.value % b.value != 0)
        refuse(fmt::format("{} / {} is not N times a number", text(a), text(b)));
      r = a.value / b.value;
      batch = a.batch && !b.batch;
      break;
  }
  return {r, batch && r != 0};
}

ShapeValue binary(char op, const ShapeValue& a, const ShapeValue& b) {
  if (a.dims != b.dims && a.values.size() != 1 && b.values.size() != 1) {
    refuse(fmt::format("extents [{}] and [{}] are not supported (only equal ones, or one element)",
                       fmt::join(a.dims, ","), fmt::join(b.dims, ",")));
  }
  const ShapeValue& big = a.values.size() >= b.values.size() ? a : b;
  ShapeValue out{a.values.size() == 1 && b.values.size() == 1 && a.dims.size() < b.dims.size() ? b.dims
                                                                                              : big.dims,
                 {}};
  for (size_t i = 0; i < big.values.size(); ++i) {
    out.values.push_back(apply(op, a.values[a.values.size() == 1 ? 0 : i], b.values[b.values.size() == 1 ? 0 : i]));
  }
  return out;
}

// The axis `a` of a tensor of `rank` extents, negative ones counted from the end.
int64_t axis_of(int64_t a, int64_t rank, const char* what) {
  if (a < -rank || a >= rank) refuse(fmt::format("{} {} is out of range for {} dimensions", what, a, rank));
  return a < 0 ? a + rank : a;
}

// The row-major strides of `dims`.
Ints strides_of(const Ints& dims) {
  Ints s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

class Evaluator {
 public:
  Evaluator(const onnx::NodeProto& node, const ShapeValueOf& value_of, const ActivationShape& shape_of)
      : node_(node), value_of_(value_of), shape_of_(shape_of) {}

  ShapeValue run() const {
    const std::string& op = node_.op_type();
    if (op == "Shape") return shape();
    if (op == "ConstantOfShape") return constant_of_shape();
    if (op == "Gather") return gather();
    if (op == "Unsqueeze") return unsqueeze();
    if (op == "Squeeze") return squeeze();
    if (op == "Concat") return concat();
    if (op == "Add") return binary('+', input(0), input(1));
    if (op == "Sub") return binary('-', input(0), input(1));
    if (op == "Mul") return binary('*', input(0), input(1));
    if (op == "Div") return binary('/', input(0), input(1));
    if (op == "Cast") return cast();
    if (op == "Reshape") return reshape();
    if (op == "Transpose") return transpose();
    if (op == "Slice") return slice();
    if (op == "Identity") return input(0);
    refuse(fmt::format("the operator {} is not supported on a shape value", op));
  }

 private:
  bool has_input(int i) const { return node_.input_size() > i && !node_.input(i).empty(); }

  ShapeValue input(int i) const {
    if (!has_input(i)) refuse(fmt::format("its input {} is missing", i));
    const auto v = value_of_(node_.input(i));
    if (!v) refuse(fmt::format("its input {} '{}' is not a shape value (integers from shapes and constants)", i,
                               node_.input(i)));
    return *v;
  }

  Ints known(int i, const char* role) const {
    return known_values(input(i), fmt::format("its {} '{}'", role, node_.input(i)));
  }

  // Integers given by input `i` (newer opsets) or by the attribute `name` (older ones).
  std::optional<Ints> ints_input_or_attribute(int i, const char* name) const {
    if (has_input(i)) return known(i, name);
    return ints_attribute(node_, name);
  }

  ShapeValue shape() const {
    const auto v = value_of_(node_.input(0));
    ShapeValue full = v ? vector_of(v->dims) : shape_of_(node_.input(0));
    const int64_t rank = static_cast<int64_t>(full.values.size());
    const auto clamp = [&](int64_t a) { return std::clamp(a < 0 ? a + rank : a, int64_t{0}, rank); };
    const int64_t start = clamp(int_attribute(node_, "start", 0));
    const int64_t end = std::max(start, clamp(int_attribute(node_, "end", rank)));
    return {{end - start}, {full.values.begin() + start, full.values.begin() + end}};
  }

  ShapeValue constant_of_shape() const {
    const Ints dims = known(0, "shape");
    int64_t fill = 0;
    if (const auto* a = find_attribute(node_, "value"); a && a->has_t()) {
      const onnx::TensorProto& t = a->t();
      if (t.data_type() == onnx::TensorProto::INT64) {
        const Ints v = int64_values(t);
        if (v.size() != 1) refuse(fmt::format("its value has {} elements, not 1", v.size()));
        fill = v[0];
      } else if (t.data_type() == onnx::TensorProto::FLOAT) {
        const std::vector<float> v = float_values(t);
        if (v.size() != 1 || v[0] != 0.0f) refuse("its value is a float other than 0 (not a shape value)");
      } else {
        refuse(fmt::format("its value is of element type {}", element_type_name(t.data_type())));
      }
    }
    return {dims, std::vector<ShapeElement>(static_cast<size_t>(count_of(dims)), {fill, false})};
  }

  ShapeValue gather() const {
    const ShapeValue data = input(0);
    if (data.dims.size() != 1) refuse(fmt::format("data of {} dimensions is not supported (only 1)", data.dims.size()));
    axis_of(int_attribute(node_, "axis", 0), 1, "axis");
    const ShapeValue indices = input(1);
    ShapeValue out{indices.dims, {}};
    const int64_t n = data.dims[0];
    for (int64_t i : known_values(indices, "its indices")) {
      if (i < -n || i >= n) refuse(fmt::format("index {} is out of range for {} elements", i, n));
      out.values.push_back(data.values[static_cast<size_t>(i < 0 ? i + n : i)]);
    }
    return out;
  }

  ShapeValue unsqueeze() const {
    ShapeValue v = input(0);
    const auto given = ints_input_or_attribute(1, "axes");
    if (!given || given->empty()) refuse("it has no axes");
    const int64_t rank = static_cast<int64_t>(v.dims.size() + given->size());
    Ints axes;
    for (int64_t a : *given) axes.push_back(axis_of(a, rank, "axis"));
    std::ranges::sort(axes);
    if (std::ranges::adjacent_find(axes) != axes.end()) refuse("an axis repeats");
    for (int64_t a : axes) v.dims.insert(v.dims.begin() + a, 1);
    return v;
  }

  ShapeValue squeeze() const {
    ShapeValue v = input(0);
    const int64_t rank = static_cast<int64_t>(v.dims.size());
    std::vector<bool> drop(v.dims.size(), false);
    const auto given = ints_input_or_attribute(1, "axes");
    if (!given) {
      for (size_t i = 0; i < v.dims.size(); ++i) drop[i] = v.dims[i] == 1;
    } else {
      for (int64_t a : *given) {
        const int64_t d = axis_of(a, rank, "axis");
        if (v.dims[d] != 1) refuse(fmt::format("axis {} has extent {}, not 1", a, v.dims[d]));
        drop[d] = true;
      }
    }
    Ints dims;
    for (size_t i = 0; i < v.dims.size(); ++i)
      if (!drop[i]) dims.push_back(v.dims[i]);
    v.dims = dims;
    return v;
  }

  ShapeValue concat() const {
    axis_of(int_attribute(node_, "axis", 0), 1, "axis");
    ShapeValue out{{0}, {}};
    for (int i = 0; i < node_.input_size(); ++i) {
      const ShapeValue v = input(i);
      if (v.dims.size() != 1) refuse(fmt::format("input {} has {} dimensions (only 1 is supported)", i, v.dims.size()));
      out.values.insert(out.values.end(), v.values.begin(), v.values.end());
    }
    out.dims[0] = static_cast<int64_t>(out.values.size());
    count_of(out.dims);
    return out;
  }

  ShapeValue cast() const {
    constexpr std::array kIntegers = {onnx::TensorProto::INT64, onnx::TensorProto::INT32, onnx::TensorProto::INT16,
                                      onnx::TensorProto::INT8,  onnx::TensorProto::UINT64, onnx::TensorProto::UINT32,
                                      onnx::TensorProto::UINT16, onnx::TensorProto::UINT8};
    const int64_t to = int_attribute(node_, "to", 0);
    if (std::ranges::find(kIntegers, to) == kIntegers.end())
      refuse(fmt::format("a cast to element type {} is not supported (only to integers)",
                         element_type_name(static_cast<int32_t>(to))));
    return input(0);
  }

  ShapeValue reshape() const {
    ShapeValue v = input(0);
    const Ints shape = known(1, "shape");
    const bool allow_zero = int_attribute(node_, "allowzero", 0) != 0;
    Ints dims;
    int64_t inferred = -1, product = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t d = shape[i];
      if (d == 0 && !allow_zero) {
        if (i >= v.dims.size()) refuse(fmt::format("shape [{}] copies an extent the data has not", fmt::join(shape, ",")));
        d = v.dims[i];
      }
      if (d == -1) {
        if (inferred >= 0) refuse(fmt::format("shape [{}] has two -1", fmt::join(shape, ",")));
        inferred = static_cast<int64_t>(i);
        d = 1;
      } else if (d < 0) {
        refuse(fmt::format("shape [{}] has a negative extent", fmt::join(shape, ",")));
      }
      dims.push_back(d);
      if (__builtin_mul_overflow(product, d, &product) || product > kMaxShapeElements)
        refuse(fmt::format("shape [{}] has more than {} elements", fmt::join(shape, ","), kMaxShapeElements));
    }
    const int64_t n = static_cast<int64_t>(v.values.size());
    if (inferred >= 0) {
      if (product == 0 || n % product != 0)
        refuse(fmt::format("shape [{}] does not fit {} elements", fmt::join(shape, ","), n));
      dims[inferred] = n / product;
    }
    if (count_of(dims) != n) refuse(fmt::format("shape [{}] does not fit {} elements", fmt::join(shape, ","), n));
    v.dims = dims;
    return v;
  }

  ShapeValue transpose() const {
    const ShapeValue v = input(0);
    const int64_t rank = static_cast<int64_t>(v.dims.size());
    Ints perm = ints_attribute(node_, "perm").value_or(Ints{});
    if (perm.empty()) {
      for (int64_t i = rank; i-- > 0;) perm.push_back(i);
    }
    Ints sorted = perm;
    std::ranges::sort(sorted);
    Ints axes(static_cast<size_t>(rank));
    std::iota(axes.begin(), axes.end(), int64_t{0});
    if (sorted != axes)
      refuse(fmt::format("perm=[{}] is not a permutation of {} axes", fmt::join(perm, ","), rank));
    ShapeValue out{Ints(v.dims.size()), {}};
    for (int64_t i = 0; i < rank; ++i) out.dims[i] = v.dims[perm[i]];
    const Ints in_strides = strides_of(v.dims);
    Ints index(v.dims.size(), 0);  // over the output, row-major
    for (size_t k = 0; k < v.values.size(); ++k) {
      int64_t at = 0;
      for (int64_t i = 0; i < rank; ++i) at += index[i] * in_strides[perm[i]];
      out.values.push_back(v.values[at]);
      for (int64_t i = rank; i-- > 0;) {
        if (++index[i] < out.dims[i]) break;
        index[i] = 0;
      }
    }
    return out;
  }

  ShapeValue slice() const {
    const ShapeValue v = input(0);
    const int64_t rank = static_cast<int64_t>(v.dims.size());
    const bool inputs = has_input(1);  // opset >= 10; attributes before
    const Ints starts = inputs ? known(1, "starts") : ints_attribute(node_, "starts").value_or(Ints{});
    const Ints ends = inputs ? known(2, "ends") : ints_attribute(node_, "ends").value_or(Ints{});
    Ints axes = inputs ? (has_input(3) ? known(3, "axes") : Ints{}) : ints_attribute(node_, "axes").value_or(Ints{});
    const Ints steps = inputs && has_input(4) ? known(4, "steps") : Ints(starts.size(), 1);
    if (axes.empty()) {
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
      refuse("its starts, ends, axes and steps differ in length");
    Ints first(rank, 0), step(rank, 1), count = v.dims;
    for (size_t j = 0; j < starts.size(); ++j) {
      const int64_t a = axis_of(axes[j], rank, "axis");
      const int64_t dim = v.dims[a], s = steps[j];
      if (s == 0) refuse("a step is 0");
      const auto at = [&](int64_t x, int64_t lo, int64_t hi) {
        if (x < 0) x = x < -dim ? lo : x + dim;
        return std::clamp(x, lo, hi);
      };
      const int64_t b = s > 0 ? at(starts[j], 0, dim) : at(starts[j], -1, dim - 1);
      const int64_t e = s > 0 ? at(ends[j], 0, dim) : at(ends[j], -1, dim - 1);
      const int64_t span = s > 0 ? e - b : b - e, by = s > 0 ? s : (s == std::numeric_limits<int64_t>::min() ? dim + 1 : -s);
      first[a] = b;
      step[a] = s > 0 ? s : -by;
      count[a] = span <= 0 ? 0 : (span + by - 1) / by;
    }
    ShapeValue out{count, {}};
    const int64_t n = count_of(count);
    const Ints strides = strides_of(v.dims);
    Ints index(rank, 0);
    for (int64_t k = 0; k < n; ++k) {
      int64_t at = 0;
      for (int64_t i = 0; i < rank; ++i) at += (first[i] + index[i] * step[i]) * strides[i];
      out.values.push_back(v.values[at]);
      for (int64_t i = rank; i-- > 0;) {
        if (++index[i] < count[i]) break;
        index[i] = 0;
      }
    }
    return out;
  }

  const onnx::NodeProto& node_;
  const ShapeValueOf& value_of_;
  const ActivationShape& shape_of_;
};

}  // namespace

std::string to_string(const ShapeValue& v) {
  std::vector<std::string> parts;
  for (const ShapeElement& e : v.values) parts.push_back(text(e));
  return fmt::format("[{}]", fmt::join(parts, ","));
}

ShapeValue shape_value_of_constant(const onnx::TensorProto& t) {
  const Ints dims = tensor_dims(t);
  count_of(dims);
  ShapeValue v{dims, {}};
  for (int64_t x : int64_values(t)) v.values.push_back({x, false});
  return v;
}

bool computes_shape_value(const onnx::NodeProto& node, const ShapeValueOf& value_of) {
  const std::string& op = node.op_type();
  if (op == "Shape" || op == "ConstantOfShape") return true;
  const auto is_value = [&](const std::string& t) { return !t.empty() && value_of(t).has_value(); };
  constexpr std::string_view kOnData[] = {"Gather", "Unsqueeze", "Squeeze", "Cast", "Reshape", "Transpose",
                                          "Slice", "Identity"};
  if (std::ranges::find(kOnData, op) != std::end(kOnData))
    return node.input_size() >= 1 && is_value(node.input(0));
  constexpr std::string_view kOnAll[] = {"Concat", "Add", "Sub", "Mul", "Div"};
  if (std::ranges::find(kOnAll, op) != std::end(kOnAll))
    return node.input_size() >= 1 && std::ranges::all_of(node.input(), is_value);
  return false;
}

ShapeValue evaluate_shape_node(const onnx::NodeProto& node, const ShapeValueOf& value_of,
                               const ActivationShape& shape_of) {
  return Evaluator(node, value_of, shape_of).run();
}

std::vector<int64_t> known_values(const ShapeValue& v, const std::string& what) {
  Ints out;
  for (const ShapeElement& e : v.values) {
    if (e.batch) refuse(fmt::format("{} is {}, which depends on the batch N", what, to_string(v)));
    out.push_back(e.value);
  }
  return out;
}

}  // namespace convgrid
