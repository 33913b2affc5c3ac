#include "planner/PipelineLayout.hpp"

#include "common/Error.hpp"
#include "planner/TransformerModel.hpp"

#include <cctype>
#include <string>

namespace paralens::core {

namespace {

constexpr size_t kMaxExpanded = 1 << 20; // symbols and separators after the repeats are unrolled

// The layout with its repeats unrolled: "x*n" and "(...)*n", nested groups allowed (Megatron-Core
// unrolls one level of groups, then single symbols; any layout it reads reads the same here).
class Expander {
public:
    explicit Expander(std::string_view text) : m_text(text) {}

    std::string All()
    {
        std::string out = Sequence();
        if (m_at < m_text.size()) Fail("a ')' without its '('");
        return out;
    }

private:
    std::string Sequence()
    {
        std::string out;
        while (m_at < m_text.size() && m_text[m_at] != ')') {
            const size_t start = m_at;
            std::string item;
            if (m_text[m_at] == '(') {
                ++m_at;
                item = Sequence();
                if (m_at >= m_text.size()) Fail("a '(' without its ')'", start);
                ++m_at;
            } else if (m_text[m_at] == ',' || std::isspace(static_cast<unsigned char>(m_text[m_at]))) {
                ++m_at; // cosmetic
                continue;
            } else {
                item = std::string(1, m_text[m_at++]);
            }
            out += Repeated(item, start);
            if (out.size() > kMaxExpanded) Fail("more than a million symbols unrolled", start);
        }
        return out;
    }

    std::string Repeated(const std::string& item, size_t start)
    {
        if (m_at >= m_text.size() || m_text[m_at] != '*') return item;
        ++m_at;
        const size_t digits = m_at;
        long count = 0;
        while (m_at < m_text.size() && std::isdigit(static_cast<unsigned char>(m_text[m_at])) && count <= static_cast<long>(kMaxExpanded))
            count = count * 10 + (m_text[m_at++] - '0');
        if (m_at == digits) Fail("'*' needs a count", digits - 1);
        if (count * static_cast<long>(item.size()) > static_cast<long>(kMaxExpanded)) Fail("more than a million symbols unrolled", start);
        std::string out;
        for (long i = 0; i < count; ++i) out += item;
        return out;
    }

    [[noreturn]] void Fail(const std::string& what, size_t at = std::string::npos) const
    {
        const size_t where = at == std::string::npos ? m_at : at;
        throw Error("--pp-layout '" + std::string(m_text) + "': " + what + " at character " + std::to_string(where + 1));
    }

    std::string_view m_text;
    size_t m_at = 0;
};

void AppendRepeated(std::string& out, char symbol, int n)
{
    if (n <= 0) return;
    out.push_back(symbol);
    if (n > 1) out.append("*").append(std::to_string(n));
}

std::string ChunkText(const PipelineLayout::Part& p)
{
    std::string out;
    if (p.embedding) out.push_back('E');
    AppendRepeated(out, 't', p.layers);
    AppendRepeated(out, 'm', p.mtp);
    if (p.loss) out.push_back('L');
    return out;
}

void Add(PipelineLayout::Part& to, const PipelineLayout::Part& p)
{
    to.layers += p.layers, to.mtp += p.mtp;
    to.embedding = to.embedding || p.embedding;
    to.loss = to.loss || p.loss;
}

} // namespace

PipelineLayout::Part PipelineLayout::Stage(int stage) const
{
    Part out;
    for (int k = 0; k < chunks; ++k) Add(out, parts[static_cast<size_t>(k * pp + stage)]);
    return out;
}

PipelineLayout::Part PipelineLayout::Total() const
{
    Part out;
    for (const Part& p : parts) Add(out, p);
    return out;
}

PipelineLayout ParsePipelineLayout(std::string_view text, int pp)
{
    Require(pp >= 1, "--pp-layout needs --pp: the layout's chunks are pp x v, chunk i on stage i % pp");
    const std::string expanded = Expander(text).All();
    PipelineLayout out;
    out.text = std::string(text);
    out.pp = pp;
    out.parts.emplace_back();
    const std::string name = "--pp-layout '" + out.text + "'";
    bool any = false, mtp = false, loss = false; // in the order Megatron-Core flattens the layers: the string's
    for (char ch : expanded) {
        PipelineLayout::Part& p = out.parts.back();
        if (ch == '|') {
            out.parts.emplace_back();
            continue;
        }
        Require(!loss, name + ": the loss (L) must be the last symbol");
        switch (ch) {
        case 't': Require(!mtp, name + ": a transformer layer after a multi-token prediction module"), ++p.layers; break;
        case 'm': mtp = true, ++p.mtp; break;
        case 'E': Require(!any, name + ": the embedding (E) must be the first symbol"), p.embedding = true; break;
        case 'L': loss = true, p.loss = true; break;
        default:
            throw Error(name + ": unknown symbol '" + std::string(1, ch) +
                        "' (E embedding, t transformer layer, m multi-token prediction module, L loss; | between chunks)");
        }
        any = true;
    }
    const size_t n = out.parts.size();
    Require(n % static_cast<size_t>(pp) == 0, "--pp-layout '" + out.text + "' has " + std::to_string(n) + " chunks, not a multiple of --pp " +
                                                   std::to_string(pp) + " (pp x v chunks, '|' between them)");
    out.chunks = static_cast<int>(n) / pp;
    return out;
}

std::string PipelineLayoutText(const std::vector<PipelineLayout::Part>& parts)
{
    std::string out;
    for (size_t i = 0; i < parts.size();) {
        const std::string chunk = ChunkText(parts[i]);
        size_t run = 1;
        while (i + run + 1 < parts.size() && ChunkText(parts[i + run]) == chunk) ++run; // the last chunk stands alone
        if (i + 1 == parts.size()) out.append(chunk);
        else if (run >= 2) out.append("(").append(chunk).append("|)*").append(std::to_string(run));
        else out.append(chunk).append("|");
        i += run;
    }
    return out;
}

void CheckPipelineLayout(const PipelineLayout& layout, const TransformerModel& model)
{
    const std::string name = "--pp-layout '" + layout.text + "'";
    int embeddings = 0, losses = 0;
    for (const PipelineLayout::Part& p : layout.parts) embeddings += p.embedding, losses += p.loss;
    Require(embeddings == 1 && losses == 1, name + " must hold the embedding (E) and the loss (L) once each");
    const PipelineLayout::Part total = layout.Total();
    Require(total.layers == model.layers, name + " holds " + std::to_string(total.layers) + " transformer layers (t), the model " +
                                                 std::to_string(model.layers));
    Require(total.mtp == model.mtpLayers, name + " holds " + std::to_string(total.mtp) + " multi-token prediction modules (m), the model " +
                                                 std::to_string(model.mtpLayers) + " (--mtp-layers)");
}

} // namespace paralens::core
