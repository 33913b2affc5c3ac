#include "analysis/SpanPrediction.hpp"

#include "model/Collective.hpp"

namespace paralens::core {

double PredictSpanSeconds(const Span& s, const Metadata& meta, const CostParams& model)
{
    const MetaSection& w = meta.workload;
    if ((s.category == SpanCategory::Send || s.category == SpanCategory::Recv) && s.bytes > 0)
        return MessageSeconds(static_cast<double>(s.bytes), model);
    if (s.category == SpanCategory::Collective) {
        const auto c = ParseCollective(w.GetString("collective"));
        const auto a = ParseAlgorithm(w.GetString("algorithm"));
        const int ranks = static_cast<int>(w.GetNumber("ranks", 0));
        if (!c || !a || ranks < 1 || !Supports(*c, *a)) return -1;
        return PredictSeconds({*c, *a, ranks, s.bytes, static_cast<int>(w.GetNumber("root", 0)), 1}, model).seconds;
    }
    const double peak = meta.hardware.GetNumber("cpuPeakFlops", 0);
    if (s.flops > 0 && peak > 0) return s.flops / peak;
    return -1;
}

} // namespace paralens::core
