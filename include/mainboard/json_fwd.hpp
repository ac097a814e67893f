#pragma once

#include <nlohmann/json_fwd.hpp>

/// Declares the JSON conversions of a model, found by argument-dependent lookup, so that
/// `nlohmann::json j = model;` and `j.get<Model>()` work. Loading ignores unknown fields and
/// throws mainboard::Error when a required field is missing or has the wrong type.
#define MAINBOARD_DECLARE_JSON(Type)                  \
  void to_json(nlohmann::json& j, const Type& value); \
  void from_json(const nlohmann::json& j, Type& value)
