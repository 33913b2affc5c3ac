// The GEMM probe: cuBLAS GEMMs per dtype and shape, timed with CUDA events after a warm-up, as
// achieved TFLOPS beside the spec sheet's peak; the best shape per dtype is the measured peak a
// user can give as the MFU denominator (--peak-tflops).
#include "gpu/detail/Cublas.hpp"
#include "gpu/detail/Kernels.hpp"
#include "gpu/detail/Timeline.hpp"
#include "gpu/detail/Workloads.hpp"

#include "common/Error.hpp"
#include "common/Units.hpp"

#include <algorithm>
#include <map>

namespace paralens::gpu::detail {

namespace {

cudaDataType_t CudaType(DType d)
{
    switch (d) {
    case DType::BFloat16: return CUDA_R_16BF;
    case DType::Half: return CUDA_R_16F;
    default: return CUDA_R_32F;
    }
}

class GemmRun {
public:
    GemmRun(const RunRequest& req, JobContext& job) : m_req(req), m_job(job), m_gpus(OpenGpus(req.gpus)) {}
    RunReport Run();

private:
    core::MetaSection Measure(const DeviceInfo& gpu, int rank, DType d, const GemmShape& s, CublasHandle& blas, Stream& stream);

    const RunRequest& m_req;
    JobContext& m_job;
    Gpus m_gpus;
    std::unique_ptr<Timeline> m_timeline;
};

core::MetaSection GemmRun::Measure(const DeviceInfo& gpu, int rank, DType d, const GemmShape& s, CublasHandle& blas, Stream& stream)
{
    const uint64_t elt = SizeOf(d);
    const uint64_t m = static_cast<uint64_t>(s.m), n = static_cast<uint64_t>(s.n), k = static_cast<uint64_t>(s.k);
    const uint64_t bytes = (m * k + k * n + m * n) * elt;
    if (bytes > gpu.freeBytes)
        throw Error("--shapes " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " needs " +
                    core::FormatBytes(bytes) + " on GPU " + std::to_string(gpu.index) + ", which has " + core::FormatBytes(gpu.freeBytes) + " free");
    DeviceScope scope(gpu.index);
    DeviceBuffer a(gpu.index, m * k * elt), b(gpu.index, k * n * elt), c(gpu.index, m * n * elt);
    const KType kt = static_cast<KType>(static_cast<int>(d));
    LaunchFillUniform(a.Get(), kt, m * k, m_req.seed, 1.0f, stream.Get());
    LaunchFillUniform(b.Get(), kt, k * n, m_req.seed + 1, 1.0f, stream.Get());
    PARALENS_CUDA_LAUNCHED("the GEMM operands' fill kernel");
    const float alpha = 1.0f, beta = 0.0f;
    const cudaDataType_t t = CudaType(d);
    const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    const std::string shape = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    prof::OpLabel label;
    label.name = "gemm_" + std::string(ShortName(d)) + "_" + shape;
    label.category = core::SpanCategory::Compute;
    label.flops = flops;
    // Row-major C (m x n) = A (m x k) B (k x n), as column-major C^T = B^T A^T.
    auto gemm = [&] {
        PARALENS_CUBLAS(Cublas().gemmEx(blas.Get(), CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &alpha, b.Get(), t, s.n, a.Get(), t,
                                        s.k, &beta, c.Get(), t, s.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    };
    label.detail = "warmup";
    for (int w = 0; w < std::max(1, m_req.warmupIters); ++w) {
        Timeline::Op op = m_timeline->Begin(stream.Get(), gpu.index, rank, "cublas", label);
        gemm();
        m_timeline->End(op);
    }
    label.detail.clear();
    Event start(gpu.index, true), end(gpu.index, true);
    PARALENS_CUDA(cudaEventRecord(start.Get(), stream.Get()));
    for (int it = 0; it < m_req.iters; ++it) {
        label.step = it;
        Timeline::Op op = m_timeline->Begin(stream.Get(), gpu.index, rank, "cublas", label);
        gemm();
        m_timeline->End(op);
    }
    PARALENS_CUDA(cudaEventRecord(end.Get(), stream.Get()));
    WaitStreams({stream.Get()}, m_job, std::chrono::seconds(static_cast<int64_t>(TimeoutSeconds())), [] {}, "the GEMM probe");
    float ms = 0;
    PARALENS_CUDA(cudaEventElapsedTime(&ms, start.Get(), end.Get()));
    const double seconds = ms * 1e-3 / m_req.iters;
    const double spec = SpecPeakFlops(gpu, std::string(ShortName(d)));
    core::MetaSection row;
    row.Set("gpu", static_cast<int64_t>(gpu.index));
    row.Set("dtype", std::string(ShortName(d)));
    row.Set("m", static_cast<int64_t>(s.m));
    row.Set("n", static_cast<int64_t>(s.n));
    row.Set("k", static_cast<int64_t>(s.k));
    row.Set("timeUs", seconds * 1e6);
    row.Set("tflops", flops / seconds / 1e12);
    if (spec > 0) {
        row.Set("specTflops", spec / 1e12);
        row.Set("fractionOfSpec", flops / seconds / spec);
    }
    return row;
}

RunReport GemmRun::Run()
{
    RunReport report;
    const DeviceInfo& first = m_gpus.used.front();
    m_timeline = std::make_unique<Timeline>(m_req.timing, m_job, TraceOptions("GEMM probe on " + first.name, 0.0), m_req.apiSpans);
    std::vector<Stream> streams;
    std::vector<std::unique_ptr<CublasHandle>> handles;
    // A process of a multi-process job probes its one GPU as its rank of the job.
    const int firstRank = m_req.processGroup.Active() ? m_req.processGroup.rank : 0;
    for (size_t r = 0; r < m_gpus.used.size(); ++r) {
        const DeviceInfo& g = m_gpus.used[r];
        m_timeline->AddRank({firstRank + static_cast<int>(r), g.index, false, g.name});
        streams.emplace_back(g.index);
        handles.push_back(std::make_unique<CublasHandle>(g.index));
        DeviceScope scope(g.index);
        PARALENS_CUBLAS(Cublas().setStream(handles.back()->Get(), streams.back().Get()));
        m_timeline->PlaceStream(streams.back().Get(), g.index, firstRank + static_cast<int>(r), "cublas");
    }
    m_timeline->EditMeta([&](core::Metadata& m) {
        m.workload.Set("workload", std::string("gemm"));
        m.workload.Set("iters", static_cast<int64_t>(m_req.iters));
        m.workload.Set("library", Cublas().library);
        DescribeHardware(m.hardware, m_gpus);
    });
    m_timeline->StartPublishing();
    const size_t total = m_gpus.used.size() * m_req.gemm.dtypes.size() * m_req.gemm.shapes.size();
    size_t done = 0;
    std::map<std::string, double> best; // dtype -> TFLOPS
    for (size_t r = 0; r < m_gpus.used.size(); ++r)
        for (DType d : m_req.gemm.dtypes)
            for (const GemmShape& s : m_req.gemm.shapes) {
                m_job.ThrowIfCancelled();
                m_job.SetProgress("GEMM " + std::string(ShortName(d)) + " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                                      std::to_string(s.k),
                                  static_cast<double>(done++) / static_cast<double>(total));
                core::MetaSection row = Measure(m_gpus.used[r], firstRank + static_cast<int>(r), d, s, *handles[r], streams[r]);
                double& b = best[std::string(ShortName(d))];
                b = std::max(b, row.GetNumber("tflops"));
                report.rows.push_back(std::move(row));
            }
    report.trace = m_timeline->Finish();
    for (const std::string& n : m_timeline->Notes()) report.notes.push_back(n);
    report.summary.Set("workload", std::string("gemm"));
    report.summary.Set("gpu", first.name);
    for (const auto& [dtype, tflops] : best) {
        report.summary.Set("measuredPeakTflops." + dtype, tflops);
        const double spec = SpecPeakFlops(first, dtype);
        if (spec > 0) report.summary.Set("specPeakTflops." + dtype, spec / 1e12);
    }
    report.summary.Set("timing", report.trace->Meta().extra.GetString("timing"));
    return report;
}

} // namespace

RunReport RunGemmWorkload(const RunRequest& request, JobContext& job)
{
    GemmRun run(request, job);
    return run.Run();
}

} // namespace paralens::gpu::detail
