#include "trace/KinetoGemm.hpp"

#include "common/Text.hpp"

#include "trace/NcclKernelName.hpp"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

namespace paralens::core {

namespace {

using Json = nlohmann::json;

bool Has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

// A tensor's "Input type" without PyTorch's namespace ("c10::BFloat16" -> "BFloat16").
std::string_view WithoutC10(std::string_view type) { return type.substr(0, 5) == "c10::" ? type.substr(5) : type; }

// The spec table's key for a tensor's "Input type" ("c10::BFloat16", "float", "c10::Float8_e4m3fn").
std::string SpecDtype(std::string_view type)
{
    const std::string c = CanonicalDtype(WithoutC10(type));
    if (c == "bfloat16") return "bf16";
    if (c == "half") return "fp16";
    if (c == "float") return "fp32";
    if (c == "fp8_e4m3" || c == "fp8_e5m2") return "fp8";
    return "";
}

// A tensor's dimensions from "Input Dims"; empty when it is not a list of integers.
std::vector<double> DimsOf(const Json& dims)
{
    std::vector<double> out;
    if (!dims.is_array()) return out;
    for (const Json& d : dims) {
        if (!d.is_number_integer() || d.get<int64_t>() <= 0) return {};
        out.push_back(static_cast<double>(d.get<int64_t>()));
    }
    return out;
}

// (batch, M, K, N) of a matmul op's operands A [(B,) M, K] and B [(B,) K, N]; false when the
// dims are not those of a matmul.
bool MatmulShape(std::string_view op, const Json& dims, double& batch, double& m, double& k, double& n, size_t& aIndex)
{
    if (!dims.is_array()) return false;
    const bool withInput = op == "aten::addmm" || op == "aten::addmm_" || op == "aten::baddbmm" || op == "aten::baddbmm_";
    aIndex = withInput ? 1 : 0;
    if (dims.size() < aIndex + 2) return false;
    const std::vector<double> a = DimsOf(dims[aIndex]), b = DimsOf(dims[aIndex + 1]);
    const bool batched = op.find("bmm") != std::string_view::npos;
    const size_t rank = batched ? 3 : 2;
    if (a.size() != rank || b.size() != rank || a[rank - 1] != b[rank - 2]) return false;
    batch = batched ? a[0] : 1.0;
    m = a[rank - 2];
    k = a[rank - 1];
    n = b[rank - 1];
    return true;
}

std::string Count(double v) { return std::to_string(static_cast<long long>(v)); }

} // namespace

bool IsAttentionKernelName(std::string_view name)
{
    const std::string s = LowerAscii(name);
    return !Has(s, "ccl") && (Has(s, "flash") || Has(s, "fmha") || Has(s, "attn") || Has(s, "attention"));
}

bool IsGemmKernelName(std::string_view name)
{
    const std::string s = LowerAscii(name);
    if (Has(s, "ccl") || IsAttentionKernelName(name)) return false;
    return Has(s, "gemm") || Has(s, "xmma") || Has(s, "nvjet") || Has(s, "cublas") || Has(s, "cutlass");
}

namespace {

bool IsMatmulOp(std::string_view name)
{
    return name == "aten::mm" || name == "aten::addmm" || name == "aten::addmm_" || name == "aten::bmm" || name == "aten::baddbmm" ||
           name == "aten::baddbmm_" || name == "aten::_scaled_mm";
}

bool IsAttentionOp(std::string_view name)
{
    for (std::string_view op : {"aten::_scaled_dot_product_flash_attention", "aten::_scaled_dot_product_efficient_attention",
                                "aten::_scaled_dot_product_cudnn_attention", "aten::_flash_attention_forward",
                                "aten::_efficient_attention_forward", "aten::_flash_attention_backward", "aten::_efficient_attention_backward"})
        if (name.substr(0, op.size()) == op) return true;
    return false;
}

// Attention's FLOPs from Q [b, h, s, d] and K [b, hk, sk, d] (the full square; the backward twice
// the forward); false when the dims are not those.
bool AttentionShape(std::string_view op, const Json& dims, double& flops, std::string& shape)
{
    if (!dims.is_array() || dims.size() < 3) return false;
    // The backward ops take the output gradient first: Q and K follow it.
    const bool backward = op.find("backward") != std::string_view::npos;
    const size_t q = backward ? 1 : 0;
    const std::vector<double> Q = DimsOf(dims[q]), K = DimsOf(dims[q + 1]);
    if (Q.size() != 4 || K.size() != 4 || Q[3] != K[3]) return false;
    flops = (backward ? 8.0 : 4.0) * Q[0] * Q[1] * Q[2] * K[2] * Q[3];
    shape = Count(Q[0]) + "x" + Count(Q[1]) + "x" + Count(Q[2]) + "x" + Count(K[2]) + "x" + Count(Q[3]);
    return true;
}

} // namespace

bool IsFlopsOpName(std::string_view name) { return IsMatmulOp(name) || IsAttentionOp(name); }

namespace {

enum class MemoryRule : uint8_t { None, Elementwise, Copy, Rewrite, Fill, Norm, NormBackward, Reduce };

MemoryRule MemoryRuleOf(std::string_view name)
{
    static const std::pair<std::string_view, MemoryRule> kOps[] = {
        {"aten::add", MemoryRule::Elementwise}, {"aten::add_", MemoryRule::Elementwise}, {"aten::sub", MemoryRule::Elementwise},
        {"aten::sub_", MemoryRule::Elementwise}, {"aten::mul", MemoryRule::Elementwise}, {"aten::mul_", MemoryRule::Elementwise},
        {"aten::div", MemoryRule::Elementwise}, {"aten::div_", MemoryRule::Elementwise}, {"aten::neg", MemoryRule::Elementwise},
        {"aten::exp", MemoryRule::Elementwise}, {"aten::log", MemoryRule::Elementwise}, {"aten::sqrt", MemoryRule::Elementwise},
        {"aten::rsqrt", MemoryRule::Elementwise}, {"aten::pow", MemoryRule::Elementwise}, {"aten::tanh", MemoryRule::Elementwise},
        {"aten::sigmoid", MemoryRule::Elementwise}, {"aten::relu", MemoryRule::Elementwise}, {"aten::relu_", MemoryRule::Elementwise},
        {"aten::gelu", MemoryRule::Elementwise}, {"aten::silu", MemoryRule::Elementwise}, {"aten::silu_", MemoryRule::Elementwise},
        {"aten::gelu_backward", MemoryRule::Elementwise}, {"aten::silu_backward", MemoryRule::Elementwise},
        {"aten::threshold_backward", MemoryRule::Elementwise}, {"aten::where", MemoryRule::Elementwise},
        {"aten::masked_fill", MemoryRule::Elementwise}, {"aten::masked_fill_", MemoryRule::Elementwise},
        {"aten::clamp", MemoryRule::Elementwise}, {"aten::clamp_", MemoryRule::Elementwise}, {"aten::eq", MemoryRule::Elementwise},
        {"aten::ne", MemoryRule::Elementwise}, {"aten::lt", MemoryRule::Elementwise}, {"aten::gt", MemoryRule::Elementwise},
        {"aten::le", MemoryRule::Elementwise}, {"aten::ge", MemoryRule::Elementwise}, {"aten::addcmul_", MemoryRule::Elementwise},
        {"aten::addcdiv_", MemoryRule::Elementwise}, {"aten::lerp_", MemoryRule::Elementwise},
        {"aten::native_dropout", MemoryRule::Elementwise}, {"aten::native_dropout_backward", MemoryRule::Elementwise},
        {"aten::copy_", MemoryRule::Copy}, {"aten::_to_copy", MemoryRule::Rewrite}, {"aten::clone", MemoryRule::Rewrite},
        {"aten::cat", MemoryRule::Rewrite}, {"aten::fill_", MemoryRule::Fill}, {"aten::zero_", MemoryRule::Fill},
        {"aten::native_layer_norm", MemoryRule::Norm}, {"aten::_softmax", MemoryRule::Norm}, {"aten::_log_softmax", MemoryRule::Norm},
        {"aten::native_layer_norm_backward", MemoryRule::NormBackward}, {"aten::_softmax_backward_data", MemoryRule::NormBackward},
        {"aten::_log_softmax_backward_data", MemoryRule::NormBackward}, {"aten::sum", MemoryRule::Reduce},
        {"aten::mean", MemoryRule::Reduce}, {"aten::amax", MemoryRule::Reduce}, {"aten::norm", MemoryRule::Reduce},
    };
    for (const auto& [op, rule] : kOps)
        if (name == op) return rule;
    return MemoryRule::None;
}

} // namespace

bool IsMemoryOpName(std::string_view name) { return MemoryRuleOf(name) != MemoryRule::None; }

double MemoryOpBytes(std::string_view name, std::string_view dimsText, std::string_view typesText)
{
    const MemoryRule rule = MemoryRuleOf(name);
    Json dims, types;
    try {
        dims = Json::parse(dimsText);
        types = Json::parse(typesText);
    } catch (const Json::exception&) {
        return 0.0;
    }
    if (rule == MemoryRule::None || !dims.is_array() || !types.is_array()) return 0.0;
    // Each tensor input's bytes (0 for scalars, lists and unknown types), in order.
    std::vector<double> bytes;
    for (size_t i = 0; i < dims.size(); ++i) {
        const std::vector<double> d = DimsOf(dims[i]);
        const std::string type = i < types.size() && types[i].is_string() ? types[i].get<std::string>() : "";
        const double size = static_cast<double>(DtypeSizeBytes(WithoutC10(type)));
        double n = d.empty() || size <= 0 ? 0.0 : size;
        for (double v : d) n *= v;
        bytes.push_back(n);
    }
    if (bytes.empty() || bytes[0] <= 0) return 0.0;
    double all = 0, largest = 0;
    for (double b : bytes) all += b, largest = std::max(largest, b);
    switch (rule) {
    case MemoryRule::Elementwise: return all + largest;             // inputs read, the output written
    case MemoryRule::Copy: return bytes[0] + (bytes.size() > 1 ? bytes[1] : bytes[0]); // destination written, source read
    case MemoryRule::Rewrite: return 2.0 * all;                    // read and written again
    case MemoryRule::Fill: return bytes[0];
    case MemoryRule::Norm: return 2.0 * bytes[0];
    case MemoryRule::NormBackward: return 3.0 * bytes[0];
    case MemoryRule::Reduce: return bytes[0];
    case MemoryRule::None: break;
    }
    return 0.0;
}

void KinetoGemms::OnKernel(const ChromeEvent& e, size_t track, size_t span, StringId name)
{
    Kernel k;
    k.track = track;
    k.span = span;
    if (const ChromeArg* c = e.Arg("correlation")) c->AsInt64(k.correlation);
    if (name >= m_nameClass.size()) m_nameClass.resize(name + size_t{1} + name / 2, 0);
    uint8_t& known = m_nameClass[name];
    if (known == 0) { // a trace runs the same few hundred kernels again and again
        const std::string s = LowerAscii(e.name);
        const bool tf32 = Has(s, "tf32") || Has(s, "s1688") || Has(s, "s16816");
        const Kind kind = IsAttentionKernelName(e.name) ? Kind::Attention : IsGemmKernelName(e.name) ? Kind::Gemm : Kind::Memory;
        known = static_cast<uint8_t>(1 + static_cast<int>(kind) + (tf32 ? 8 : 0));
    }
    k.kind = static_cast<Kind>((known & 7) - 1);
    k.tf32 = (known & 8) != 0;
    m_kernels.push_back(k);
}

void KinetoGemms::OnMemoryOp(const ChromeEvent& e)
{
    const ChromeArg* dims = e.Arg("Input Dims");
    const ChromeArg* types = e.Arg("Input type");
    if (!dims || !types || dims->kind != JsonKind::Array || types->kind != JsonKind::Array) return;
    Op op;
    op.kind = Kind::Memory;
    op.bytes = MemoryOpBytes(e.name, dims->text, types->text);
    if (op.bytes <= 0) return;
    op.shape = std::string(e.name);
    op.thread = m_threads.ThreadId(e.pid, e.tid);
    op.startNs = e.tsNs;
    op.endNs = e.tsNs + std::clamp<int64_t>(e.hasDur ? e.durNs : 0, 0, kMaxAbsTraceNs);
    m_ops.push_back(std::move(op));
}

void KinetoGemms::OnFlopsOp(const ChromeEvent& e)
{
    const ChromeArg* dims = e.Arg("Input Dims");
    if (!dims || dims->kind != JsonKind::Array) return;
    Json parsed, types;
    try {
        parsed = Json::parse(dims->text);
        if (const ChromeArg* t = e.Arg("Input type"); t && t->kind == JsonKind::Array) types = Json::parse(t->text);
    } catch (const Json::exception&) {
        return;
    }
    Op op;
    size_t aIndex = 0;
    if (IsAttentionOp(e.name)) {
        op.kind = Kind::Attention;
        if (!AttentionShape(e.name, parsed, op.flops, op.shape)) return;
        aIndex = e.name.find("backward") != std::string_view::npos ? 1 : 0;
    } else {
        double batch = 1, m = 0, k = 0, n = 0;
        if (!MatmulShape(e.name, parsed, batch, m, k, n, aIndex)) return;
        op.flops = 2.0 * batch * m * n * k;
        op.shape = (batch > 1 ? Count(batch) + "x" : std::string()) + Count(m) + "x" + Count(n) + "x" + Count(k);
    }
    op.thread = m_threads.ThreadId(e.pid, e.tid);
    op.startNs = e.tsNs;
    op.endNs = e.tsNs + std::clamp<int64_t>(e.hasDur ? e.durNs : 0, 0, kMaxAbsTraceNs);
    if (types.is_array() && types.size() > aIndex && types[aIndex].is_string()) op.dtype = SpecDtype(types[aIndex].get<std::string>());
    if (e.name == "aten::_scaled_mm") op.dtype = "fp8";
    m_ops.push_back(std::move(op));
}

KinetoGemms::Op* KinetoGemms::Innermost(uint32_t thread, int64_t tsNs)
{
    auto it = std::upper_bound(m_ops.begin(), m_ops.end(), std::make_pair(thread, tsNs),
                               [](const std::pair<uint32_t, int64_t>& key, const Op& op) {
                                   return key.first != op.thread ? key.first < op.thread : key.second < op.startNs;
                               });
    for (int steps = 0; it != m_ops.begin() && steps < 32; ++steps) { // the latest start enclosing it is the innermost
        --it;
        if (it->thread != thread) break;
        if (it->startNs <= tsNs && tsNs <= it->endNs) return &*it;
    }
    return nullptr;
}

size_t KinetoGemms::KernelCount(Kind kind) const
{
    return static_cast<size_t>(std::count_if(m_kernels.begin(), m_kernels.end(), [&](const Kernel& k) { return k.kind == kind; }));
}

size_t KinetoGemms::Resolved(Kind kind) const { return m_resolved[static_cast<size_t>(kind)]; }

void KinetoGemms::Resolve(std::vector<PendingTrack>& tracks, TraceBuilder& builder)
{
    std::sort(m_ops.begin(), m_ops.end(), [](const Op& a, const Op& b) {
        return a.thread != b.thread ? a.thread < b.thread : a.startNs < b.startNs;
    });
    std::vector<Op*> opOf(m_kernels.size(), nullptr);
    for (size_t i = 0; i < m_kernels.size(); ++i) {
        uint32_t thread = 0;
        int64_t ts = 0;
        if (m_kernels[i].correlation < 0 || !m_threads.FindLaunch(m_kernels[i].correlation, thread, ts)) continue;
        opOf[i] = Innermost(thread, ts);
        if (opOf[i] && opOf[i]->kind != m_kernels[i].kind) opOf[i] = nullptr; // a GEMM kernel of an attention op, an elementwise one of a matmul, ...
        if (opOf[i]) ++opOf[i]->kernels;
    }
    for (size_t i = 0; i < m_kernels.size(); ++i) {
        const Op* op = opOf[i];
        if (!op) continue;
        Span& s = tracks[m_kernels[i].track].spans[m_kernels[i].span];
        ++m_resolved[static_cast<size_t>(m_kernels[i].kind)];
        if (op->kind == Kind::Memory) {
            s.bytes = static_cast<uint64_t>(op->bytes / op->kernels);
            if (s.detail == 0) s.detail = builder.Intern("memory " + op->shape);
            continue;
        }
        s.flops = op->flops / op->kernels;
        const std::string dtype = op->dtype == "fp32" && m_kernels[i].tf32 ? "tf32" : op->dtype;
        if (s.detail == 0) s.detail = builder.Intern((op->kind == Kind::Attention ? "attention " : "gemm ") + op->shape + (dtype.empty() ? "" : " " + dtype));
    }
}

} // namespace paralens::core
