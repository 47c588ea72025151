// How Python (and pandas, which msprobe writes its tables with) prints and parses values,
// so parity's tables read exactly like msprobe's: repr() of a float ("1e-05", "0.5",
// "2.9802322831784522e-09"), repr() of a str, and float() parsing ("inf", " 1.5%" without
// the '%' is the caller's job).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace parity::msprobe {

// repr(float(x)): shortest round-trip digits; fixed notation for 1e-4 <= |x| < 1e16,
// otherwise d.ddde±XX; "nan", "inf", "-inf".
std::string PyFloatRepr(double value);
// The same into a caller's buffer, without allocating; returns the length.
inline constexpr size_t kPyFloatReprMax = 32;
size_t PyFloatReprInto(double value, char (&out)[kPyFloatReprMax]);

// repr(str): single quotes unless the text holds a ' and no ", escapes \n \t \\ etc.
std::string PyStrRepr(std::string_view text);

// float(text) as Python parses it (surrounding whitespace allowed, inf/nan/infinity in
// any case, '_' not accepted). nullopt when Python would raise ValueError.
std::optional<double> PyParseFloat(std::string_view text);

// pandas.to_numeric() of a string, which msprobe's statistics diff goes through: pandas'
// fast decimal parser (digits accumulated in a double, then scaled by powers of ten), not
// a correctly rounded one, so the last bits can differ from float(). msprobe's "Max diff"
// and "MaxRelativeErr" cells are computed from these values; parity uses the same
// arithmetic so its table reads the same. nullopt when the text is not a plain decimal.
std::optional<double> PandasToNumeric(std::string_view text);

}  // namespace parity::msprobe
