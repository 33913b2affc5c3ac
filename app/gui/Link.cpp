#include "Link.hpp"

#include "ScenarioLoader.hpp"

#include "common/Error.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

namespace paralens::app {

namespace {

using nlohmann::json;
using Flat = std::vector<std::pair<std::string, json>>; // "straggler.rank" -> 3, in the object's order

constexpr int kMaxExperiments = 64;

Flat Flatten(const json& object)
{
    Flat out;
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (it->is_object()) {
            for (auto in = it->begin(); in != it->end(); ++in) out.emplace_back(it.key() + "." + in.key(), *in);
        } else {
            out.emplace_back(it.key(), *it);
        }
    }
    return out;
}

const json* Find(const Flat& flat, const std::string& key)
{
    for (const auto& [k, v] : flat)
        if (k == key) return &v;
    return nullptr;
}

void SetPath(json& object, const std::string& key, json value)
{
    const size_t dot = key.find('.');
    if (dot == std::string::npos) object[key] = std::move(value);
    else object[key.substr(0, dot)][key.substr(dot + 1)] = std::move(value);
}

bool ParseKind(std::string_view text, ExperimentKind& out)
{
    for (ExperimentKind k : {ExperimentKind::Collective, ExperimentKind::Pipeline, ExperimentKind::Training, ExperimentKind::Autopar,
                             ExperimentKind::Plan})
        if (Name(k) == text) {
            out = k;
            return true;
        }
    return false;
}

json DefaultOfKind(ExperimentKind kind)
{
    Experiment e;
    e.kind = kind;
    return ExperimentJson(e);
}

// A link's text as the JSON value a key holds now (`like`): numbers and booleans parsed, text kept.
bool ToValue(const std::string& text, const json& like, json& out, std::string& why)
{
    if (like.is_string()) {
        out = text;
        return true;
    }
    if (like.is_boolean()) {
        if (text == "true" || text == "1" || text == "on") out = true;
        else if (text == "false" || text == "0" || text == "off") out = false;
        else return why = "expected true or false", false;
        return true;
    }
    const json parsed = json::parse(text, nullptr, false);
    if (!parsed.is_number()) return why = like.is_number_integer() ? "expected a whole number" : "expected a number", false;
    if (like.is_number_integer() && !parsed.is_number_integer()) return why = "expected a whole number", false;
    out = parsed;
    return true;
}

std::string ValueText(const json& v)
{
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isfinite(d) && d == std::round(d) && std::fabs(d) < 1e15) return std::to_string(static_cast<long long>(d));
    }
    return v.dump();
}

struct Param {
    std::string key, value;
    std::string Text() const { return "'" + key + "=" + value + "'"; }
};

std::vector<Param> SplitParams(std::string_view link)
{
    if (const size_t hash = link.find('#'); hash != std::string_view::npos) link.remove_prefix(hash + 1);
    else if (link.find("://") != std::string_view::npos) link = {}; // a URL without a fragment
    if (!link.empty() && link.front() == '?') link.remove_prefix(1);
    std::vector<Param> out;
    while (!link.empty()) {
        const size_t amp = link.find('&');
        const std::string_view part = link.substr(0, amp);
        link = amp == std::string_view::npos ? std::string_view{} : link.substr(amp + 1);
        if (part.empty()) continue;
        const size_t eq = part.find('=');
        out.push_back({PercentDecode(part.substr(0, eq)), eq == std::string_view::npos ? "" : PercentDecode(part.substr(eq + 1))});
    }
    return out;
}

// Experiment I of "eI.key", or -1 for an unprefixed key (`rest` is then the whole key).
int ExperimentPrefix(const std::string& key, std::string& rest)
{
    rest = key;
    if (key.size() < 3 || key[0] != 'e' || !std::isdigit(static_cast<unsigned char>(key[1]))) return -1;
    const size_t dot = key.find('.');
    if (dot == std::string::npos) return -1;
    for (size_t i = 1; i < dot; ++i)
        if (!std::isdigit(static_cast<unsigned char>(key[i]))) return -1;
    rest = key.substr(dot + 1);
    return dot > 6 ? kMaxExperiments : std::stoi(key.substr(1, dot - 1));
}

// The link being read: the scenario's objects, changed parameter by parameter.
class LinkReader {
public:
    explicit LinkReader(std::vector<Param> params) : m_params(std::move(params)), m_used(m_params.size(), false) {}

    LinkState Read()
    {
        PickScenario();
        SetCount();
        SetKinds();
        SetView();
        SetExperimentKeys();
        return Finish();
    }

private:
    void Problem(const Param& p, const std::string& why) { m_state.problems.push_back("link: " + p.Text() + " skipped: " + why); }

    bool Take(const Param& p) // marks a parameter as read; false when it was already
    {
        const size_t i = static_cast<size_t>(&p - m_params.data());
        if (m_used[i]) return false;
        m_used[i] = true;
        return true;
    }

    void PickScenario()
    {
        const Scenario* s = FindScenario("default");
        for (const Param& p : m_params) {
            if (p.key != "scenario" || !Take(p)) continue;
            if (const Scenario* found = FindScenario(p.value)) s = found;
            else Problem(p, "no built-in scenario has that name (" + ScenarioNamesList() + ")");
        }
        m_state.scenario = s->name;
        m_view = ViewJson(s->view);
        for (const Experiment& e : s->experiments) m_experiments.push_back(ExperimentJson(e));
    }

    void SetCount()
    {
        for (const Param& p : m_params) {
            if (p.key != "experiments" || !Take(p)) continue;
            const json n = json::parse(p.value, nullptr, false);
            if (!n.is_number_integer() || n.get<int>() < 1 || n.get<int>() > kMaxExperiments) {
                Problem(p, "expected a number of experiments from 1 to " + std::to_string(kMaxExperiments));
                continue;
            }
            m_experiments.resize(static_cast<size_t>(n.get<int>()), DefaultOfKind(ExperimentKind::Collective));
        }
    }

    void SetKinds()
    {
        for (const Param& p : m_params) {
            std::string rest;
            const int index = ExperimentPrefix(p.key, rest);
            if (index < 0 || rest != "kind" || !Take(p)) continue;
            ExperimentKind kind;
            if (index >= static_cast<int>(m_experiments.size())) Problem(p, "there are " + std::to_string(m_experiments.size()) + " experiments (from e0)");
            else if (!ParseKind(p.value, kind)) Problem(p, "expected collective, pipeline, training, autopar or plan (files are not part of links)");
            else if (m_experiments[static_cast<size_t>(index)]["kind"] != p.value) m_experiments[static_cast<size_t>(index)] = DefaultOfKind(kind);
        }
    }

    void SetView();
    void SetExperimentKeys();
    bool TryApply(const Param& p, const std::vector<size_t>& targets, const std::string& key, std::string& why);
    LinkState Finish();

    std::vector<Param> m_params;
    std::vector<bool> m_used;
    LinkState m_state;
    json m_view;
    std::vector<json> m_experiments;
};

void LinkReader::SetView()
{
    for (const Param& p : m_params) {
        if (p.key == "theme" && Take(p)) {
            if (p.value == "dark" || p.value == "light") m_state.dark = p.value == "dark";
            else Problem(p, "expected dark or light");
        } else if (p.key == "presentation" && Take(p)) {
            json v;
            std::string why;
            if (ToValue(p.value, json(false), v, why)) m_state.presentation = v.get<bool>();
            else Problem(p, why);
        }
        const std::string key = p.key == "view" ? "tab" : p.key;
        if (!m_view.contains(key) || !Take(p)) continue;
        json candidate = m_view, value;
        std::string why;
        if (!ToValue(p.value, m_view[key], value, why)) {
            Problem(p, why);
            continue;
        }
        candidate[key] = value;
        try {
            (void)ParseView(candidate, "view");
            m_view = std::move(candidate);
        } catch (const Error& e) {
            Problem(p, e.what());
        }
    }
}

// Sets `key` in each target experiment; false (and why) when a value or an experiment refuses it.
bool LinkReader::TryApply(const Param& p, const std::vector<size_t>& targets, const std::string& key, std::string& why)
{
    std::vector<json> changed;
    for (size_t t : targets) {
        json candidate = m_experiments[t], value;
        const json* like = Find(Flatten(candidate), key);
        if (!ToValue(p.value, *like, value, why)) return false;
        SetPath(candidate, key, value);
        try {
            (void)ParseExperiment(candidate, "experiment " + std::to_string(t));
        } catch (const Error& e) {
            why = e.what();
            return false;
        }
        changed.push_back(std::move(candidate));
    }
    for (size_t i = 0; i < targets.size(); ++i) m_experiments[targets[i]] = std::move(changed[i]);
    return true;
}

void LinkReader::SetExperimentKeys()
{
    struct Pending {
        const Param* param;
        std::vector<size_t> targets;
        std::string key, why;
    };
    std::vector<Pending> pending;
    for (const Param& p : m_params) {
        if (!Take(p)) continue;
        std::string key;
        const int index = ExperimentPrefix(p.key, key);
        std::vector<size_t> targets;
        for (size_t i = 0; i < m_experiments.size(); ++i)
            if ((index < 0 || static_cast<size_t>(index) == i) && Find(Flatten(m_experiments[i]), key)) targets.push_back(i);
        if (!targets.empty()) pending.push_back({&p, targets, key, ""});
        else if (index >= static_cast<int>(m_experiments.size())) Problem(p, "there are " + std::to_string(m_experiments.size()) + " experiments (from e0)");
        else Problem(p, index >= 0 ? "experiment " + std::to_string(index) + " has no such key" : "not a parameter of this scenario's experiments or views");
    }
    // A value may depend on another (an algorithm on its collective): retry refused ones while any applies.
    for (bool progress = true; progress && !pending.empty();) {
        progress = false;
        for (auto it = pending.begin(); it != pending.end();) {
            if (TryApply(*it->param, it->targets, it->key, it->why)) {
                it = pending.erase(it);
                progress = true;
            } else {
                ++it;
            }
        }
    }
    for (const Pending& p : pending) Problem(*p.param, p.why);
}

LinkState LinkReader::Finish()
{
    for (size_t i = 0; i < m_experiments.size(); ++i) m_state.experiments.push_back(ParseExperiment(m_experiments[i], "experiment " + std::to_string(i)));
    m_state.view = ParseView(m_view, "view");
    const int count = static_cast<int>(m_state.experiments.size());
    if (m_state.view.selected >= count) {
        m_state.problems.push_back("link: 'selected' names experiment " + std::to_string(m_state.view.selected) + " of " + std::to_string(count) + "; the first is selected");
        m_state.view.selected = 0;
    }
    if (m_state.view.modelExperiment >= count) m_state.view.modelExperiment = -1;
    return m_state;
}

std::string ExperimentKey(size_t index, const std::string& key) // "e2.ranks"
{
    std::string out = "e";
    out += std::to_string(index);
    out += '.';
    out += key;
    return out;
}

void Add(std::string& out, const std::string& key, const json& value)
{
    out += (out.empty() ? "" : "&") + PercentEncode(key) + "=" + PercentEncode(ValueText(value));
}

// The experiments' changed keys: unprefixed where every experiment that has the key changed it
// to the same value, else eI.key.
void AddExperimentKeys(std::string& out, const std::vector<Flat>& now, const std::vector<Flat>& base)
{
    std::vector<std::string> order;
    std::map<std::string, std::vector<std::pair<size_t, json>>> changed; // key -> (experiment, value)
    for (size_t i = 0; i < now.size(); ++i)
        for (const auto& [key, value] : now[i]) {
            if (key == "kind") continue;
            const json* was = Find(base[i], key);
            if (was && *was == value) continue;
            if (!changed.count(key)) order.push_back(key);
            changed[key].emplace_back(i, value);
        }
    for (const std::string& key : order) {
        const auto& list = changed[key];
        size_t holders = 0;
        for (const Flat& f : now) holders += Find(f, key) != nullptr;
        const bool shared = list.size() == holders &&
                            std::all_of(list.begin(), list.end(), [&](const auto& c) { return c.second == list.front().second; });
        if (shared) Add(out, key, list.front().second);
        else
            for (const auto& [i, value] : list) Add(out, ExperimentKey(i, key), value);
    }
}

} // namespace

LinkState ParseLink(std::string_view link) { return LinkReader(SplitParams(link)).Read(); }

std::string MakeLink(const LinkState& state, int* omitted)
{
    const Scenario* scenario = FindScenario(state.scenario);
    if (!scenario) scenario = FindScenario("default");
    std::string out;
    Add(out, "scenario", scenario->name);
    std::vector<Flat> now, base;
    for (const Experiment& e : state.experiments) {
        if (e.kind == ExperimentKind::File || e.kind == ExperimentKind::WhatIf) continue;
        now.push_back(Flatten(ExperimentJson(e)));
    }
    if (omitted) *omitted = static_cast<int>(state.experiments.size() - now.size());
    if (now.size() != scenario->experiments.size()) Add(out, "experiments", static_cast<int>(now.size()));
    for (size_t i = 0; i < now.size(); ++i) {
        json was = i < scenario->experiments.size() ? ExperimentJson(scenario->experiments[i]) : DefaultOfKind(ExperimentKind::Collective);
        const json& kind = *Find(now[i], "kind");
        if (was["kind"] != kind) {
            Add(out, ExperimentKey(i, "kind"), kind);
            ExperimentKind k = ExperimentKind::Collective;
            ParseKind(kind.get<std::string>(), k);
            was = DefaultOfKind(k);
        }
        base.push_back(Flatten(was));
    }
    const json view = ViewJson(state.view), baseView = ViewJson(scenario->view);
    for (auto it = view.begin(); it != view.end(); ++it)
        if (baseView[it.key()] != *it) Add(out, it.key() == "tab" ? "view" : it.key(), *it);
    if (state.dark) Add(out, "theme", "dark");
    if (state.presentation) Add(out, "presentation", 1);
    AddExperimentKeys(out, now, base);
    return out;
}

std::string PercentEncode(std::string_view text)
{
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : text) {
        if (std::isalnum(c) || std::string_view("-_.!~*'()").find(static_cast<char>(c)) != std::string_view::npos) out += static_cast<char>(c);
        else out += {'%', hex[c >> 4], hex[c & 15]};
    }
    return out;
}

std::string PercentDecode(std::string_view text)
{
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
            out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

} // namespace paralens::app
