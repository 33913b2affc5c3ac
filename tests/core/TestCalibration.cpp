// Calibrating the planner from a profile: GEMM kernels of a Kineto trace get their FLOPs from the
// matmul ops that launched them; a trace's GEMMs give the efficiency by size; the planner times
// its GEMMs at the efficiency of their size.
#include "common/Error.hpp"
#include "planner/Calibration.hpp"
#include "planner/Planner.hpp"
#include "trace/CollectiveTag.hpp"
#include "trace/KinetoGemm.hpp"
#include "trace/TraceBuilder.hpp"
#include "trace/TraceFile.hpp"

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>

using namespace paralens;
using namespace paralens::core;

namespace {

const Span* SpanAt(const Trace& t, int64_t startNs)
{
    for (const Track& track : t.Tracks())
        for (const Span& s : track.spans)
            if (s.startNs == startNs && t.Devices()[track.device].kind == DeviceKind::Gpu) return &s;
    return nullptr;
}

std::string RefFile(const std::string& rel)
{
    std::string path = std::string(PARALENS_SOURCE_DIR) + "/../shared/reference-data/" + rel;
    return std::filesystem::exists(path) ? path : "";
}

// A GPU's trace of GEMM kernels, `count` of each (FLOPs, efficiency against the bf16 peak).
Trace GemmTrace(const std::vector<std::tuple<double, double, int>>& kernels, const std::string& gpu)
{
    TraceBuilder b;
    const uint32_t device = b.AddDevice("GPU 0 (" + gpu + ")", DeviceKind::Gpu, 0);
    const uint32_t track = b.AddTrack(device, "stream 7");
    const double peak = FindGpu(gpu)->PeakFlops("bf16");
    int64_t t = 0;
    for (const auto& [flops, efficiency, count] : kernels)
        for (int i = 0; i < count; ++i) {
            Span s;
            s.startNs = t;
            s.endNs = t + static_cast<int64_t>(std::llround(flops / (peak * efficiency) * 1e9));
            s.flops = flops;
            s.category = SpanCategory::Compute;
            s.name = b.Intern("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n");
            s.detail = b.Intern("gemm 4096x4096x4096 bf16");
            b.AddSpan(track, s);
            t = s.endNs + 1000;
        }
    return std::move(b).Finish();
}

// Llama 3 8B on `gpus` H100s, 32 sequences a step.
PlanRequest Llama8b(int gpus)
{
    PlanRequest r;
    r.model = *FindModelPreset("llama3-8b");
    r.cluster.gpu = *FindGpu("h100-sxm");
    r.cluster.gpus = gpus;
    r.globalBatch = 32;
    return r;
}

} // namespace

TEST_CASE("Kineto: GEMM kernels take their FLOPs and shape from the matmul op that launched them", "[io][kineto][calibration]")
{
    const std::string text = R"J({"traceEvents":[
      {"ph":"X","cat":"cpu_op","name":"aten::linear","pid":9,"tid":9,"ts":100,"dur":80,"args":{}},
      {"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":9,"tid":9,"ts":101,"dur":40,
       "args":{"Input Dims":[[4096],[8192,1024],[1024,4096]],"Input type":["c10::BFloat16","c10::BFloat16","c10::BFloat16"]}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":110,"dur":5,"args":{"correlation":5}},
      {"ph":"X","cat":"kernel","name":"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64","pid":0,"tid":7,"ts":200,"dur":10,
       "args":{"correlation":5}},
      {"ph":"X","cat":"cpu_op","name":"aten::bmm","pid":9,"tid":9,"ts":300,"dur":40,
       "args":{"Input Dims":[[8,512,64],[8,64,512]],"Input type":["float","float"]}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":310,"dur":5,"args":{"correlation":6}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":320,"dur":5,"args":{"correlation":7}},
      {"ph":"X","cat":"kernel","name":"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4>(Params)","pid":0,"tid":7,
       "ts":400,"dur":3,"args":{"correlation":6}},
      {"ph":"X","cat":"kernel","name":"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4>(Params)","pid":0,"tid":7,
       "ts":410,"dur":3,"args":{"correlation":7}},
      {"ph":"X","cat":"kernel","name":"ampere_sgemm_32x32_sliced1x4_tn","pid":0,"tid":7,"ts":500,"dur":3,"args":{"correlation":99}},
      {"ph":"X","cat":"kernel","name":"flash_fwd_kernel","pid":0,"tid":7,"ts":600,"dur":3,"args":{"correlation":5}}
    ]})J";
    const Trace t = ReadTraceText(text, "step.json");
    const Span* addmm = SpanAt(t, 200000);
    REQUIRE(addmm);
    CHECK(addmm->flops == 2.0 * 8192 * 4096 * 1024); // the innermost matmul op, not aten::linear
    CHECK(t.Str(addmm->detail) == "gemm 8192x4096x1024 bf16");
    const Span* half = SpanAt(t, 400000);
    REQUIRE(half);
    CHECK(half->flops == 2.0 * 8 * 512 * 512 * 64 / 2); // the op's two kernels share its FLOPs
    CHECK(t.Str(half->detail) == "gemm 8x512x512x64 tf32"); // float on TF32 tensor cores, as the kernel says
    CHECK(SpanAt(t, 500000)->flops == 0);                 // no launch found: no FLOPs
    CHECK(SpanAt(t, 600000)->flops == 0);                 // attention is not a GEMM
    CHECK(t.Meta().results.GetNumber("gemmKernels") == 4);
    CHECK(t.Meta().results.GetNumber("gemmKernelsWithFlops") == 3);
    CHECK(IsGemmKernelName("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTT"));
    CHECK_FALSE(IsGemmKernelName("fmha_cutlassF_f16_aligned_64x64_rf_sm80"));
}

TEST_CASE("Kineto: memory-bound kernels take the bytes their elementwise, copy or norm op moved", "[io][kineto][calibration]")
{
    // An in-place add of two bf16 1024 x 1024 tensors: both read, the first written.
    CHECK(MemoryOpBytes("aten::add_", "[[1024,1024],[1024,1024],[]]", R"(["c10::BFloat16","c10::BFloat16","Scalar"])") == 3 * 2097152.0);
    // A broadcast multiply: each input read, the output at the largest input's size in the first's type.
    CHECK(MemoryOpBytes("aten::mul", "[[2048,1],[2048,1]]", R"(["float","bool"])") == 2048 * 4 + 2048 + 2048 * 4);
    CHECK(MemoryOpBytes("aten::copy_", "[[4096],[4096],[]]", R"(["float","c10::BFloat16","Scalar"])") == 4096 * 4 + 4096 * 2);
    CHECK(MemoryOpBytes("aten::fill_", "[[50],[]]", R"(["float","Scalar"])") == 200);
    CHECK(MemoryOpBytes("aten::native_layer_norm", "[[8,1024],[1024],[1024],[]]", R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar"])") ==
          2 * 16384);
    CHECK(MemoryOpBytes("aten::mm", "[[8,8],[8,8]]", R"(["float","float"])") == 0);    // not a memory-bound op
    CHECK(MemoryOpBytes("aten::mul", "[[],[]]", R"(["Scalar","Scalar"])") == 0);        // no tensor
    CHECK(MemoryOpBytes("aten::mul", "[[8,8]]", R"(["c10::ComplexFloat"])") == 0);     // a type of unknown size
    CHECK(IsMemoryOpName("aten::native_layer_norm_backward"));
    CHECK_FALSE(IsMemoryOpName("aten::linear"));

    const std::string text = R"J({"traceEvents":[
      {"ph":"X","cat":"cpu_op","name":"aten::add_","pid":9,"tid":9,"ts":100,"dur":40,
       "args":{"Input Dims":[[1024,1024],[1024,1024],[]],"Input type":["c10::BFloat16","c10::BFloat16","Scalar"]}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":110,"dur":5,"args":{"correlation":5}},
      {"ph":"X","cat":"kernel","name":"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16> >","pid":0,"tid":7,
       "ts":200,"dur":10,"args":{"correlation":5}},
      {"ph":"X","cat":"cpu_op","name":"aten::layer_norm","pid":9,"tid":9,"ts":300,"dur":80,"args":{}},
      {"ph":"X","cat":"cpu_op","name":"aten::native_layer_norm_backward","pid":9,"tid":9,"ts":301,"dur":60,
       "args":{"Input Dims":[[8,1024],[8,1024],[],[8,1],[8,1],[1024],[1024],[]],
               "Input type":["c10::BFloat16","c10::BFloat16","ScalarList","float","float","c10::BFloat16","c10::BFloat16","GenericList"]}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":310,"dur":5,"args":{"correlation":6}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":320,"dur":5,"args":{"correlation":7}},
      {"ph":"X","cat":"kernel","name":"void at::native::layer_norm_grad_input_kernel<c10::BFloat16, float>","pid":0,"tid":7,"ts":400,"dur":3,
       "args":{"correlation":6}},
      {"ph":"X","cat":"kernel","name":"void at::native::GammaBetaBackwardCUDAKernel<c10::BFloat16, float>","pid":0,"tid":7,"ts":410,"dur":3,
       "args":{"correlation":7}},
      {"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":9,"tid":9,"ts":500,"dur":40,
       "args":{"Input Dims":[[4096],[8192,1024],[1024,4096]],"Input type":["c10::BFloat16","c10::BFloat16","c10::BFloat16"]}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":510,"dur":5,"args":{"correlation":8}},
      {"ph":"X","cat":"kernel","name":"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >","pid":0,"tid":7,
       "ts":600,"dur":3,"args":{"correlation":8}}
    ]})J";
    const Trace t = ReadTraceText(text, "step.json");
    const Span* add = SpanAt(t, 200000);
    REQUIRE(add);
    CHECK(add->bytes == 3 * 2097152);
    CHECK(t.Str(add->detail) == "memory aten::add_");
    // The innermost op is the backward (aten::layer_norm launches nothing itself): its 3 x 16 KiB over its two kernels.
    REQUIRE(SpanAt(t, 400000));
    CHECK(SpanAt(t, 400000)->bytes == 3 * 16384 / 2);
    CHECK(SpanAt(t, 410000)->bytes == 3 * 16384 / 2);
    CHECK(SpanAt(t, 600000)->bytes == 0); // an elementwise kernel of a matmul op: no bytes from it
    CHECK(t.Meta().results.GetNumber("memoryKernelsWithBytes") == 3);
}

TEST_CASE("calibration: memory-bound kernels at a known fraction of HBM bandwidth give it back, and the planner runs its memory-bound ops at it",
          "[core][calibration][planner]")
{
    TraceBuilder b;
    const uint32_t track = b.AddTrack(b.AddDevice("GPU 0 (NVIDIA H100 80GB HBM3)", DeviceKind::Gpu, 0), "stream 7");
    const double hbm = 3350e9;
    int64_t at = 0;
    auto add = [&](double bytes, double fraction, int count, const char* name) {
        for (int i = 0; i < count; ++i) {
            Span s;
            s.startNs = at;
            s.endNs = at + static_cast<int64_t>(std::llround(bytes / (hbm * fraction) * 1e9));
            s.bytes = static_cast<uint64_t>(bytes);
            s.category = SpanCategory::Compute;
            s.name = b.Intern(name);
            b.AddSpan(track, s);
            at = s.endNs + 1000;
        }
    };
    add(2e6, 0.30, 10, "void at::native::vectorized_elementwise_kernel<4>");
    add(2e8, 0.80, 10, "void at::native::vectorized_elementwise_kernel<4>");
    add(5e5, 0.10, 2, "void at::native::reduce_kernel<512>"); // too few for a point of their own, but in the whole
    Span gemm;
    gemm.startNs = at, gemm.endNs = at + 1000000, gemm.flops = 1e11, gemm.category = SpanCategory::Compute;
    gemm.name = b.Intern("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n");
    b.AddSpan(track, gemm);
    const Calibration c = CalibrateFromTrace(std::move(b).Finish(), "synthetic", *FindGpu("h100-sxm"));
    CHECK(c.memoryKernelsWithBytes == 22);
    REQUIRE(c.hbmPoints.size() == 2);
    CHECK(c.hbmPoints[0].bytes == Approx(2e6));
    CHECK(c.hbmPoints[0].efficiency == Approx(0.30).epsilon(1e-3));
    CHECK(c.hbmPoints[1].efficiency == Approx(0.80).epsilon(1e-3));
    const double bytes = 10 * 2e6 + 10 * 2e8 + 2 * 5e5;
    CHECK(c.hbmEfficiency == Approx(bytes / (10 * 2e6 / 0.3 + 10 * 2e8 / 0.8 + 2 * 5e5 / 0.1)).epsilon(1e-3));
    // The planner: Adam's update (a layer's parameters a launch, far beyond 2e8 bytes) at 80% of HBM.
    PlanRequest r = Llama8b(8);
    TrainingConfig one;
    one.dp = 8;
    const PlanRow plain = Evaluate(r, one);
    ApplyCalibration(c, r.cluster);
    CHECK(r.cluster.hbmCurve.size() == 2);
    CHECK_FALSE(r.cluster.gemmCurve.empty());
    const PlanRow calibrated = Evaluate(r, one);
    CHECK(calibrated.time.optimizer == Approx(plain.time.optimizer / 0.8).epsilon(1e-4)); // durations to the nanosecond
    // The layers' norms and residual adds (each 4 s b h = 134 MB here) run between the points: slower than at full bandwidth.
    r.cluster.gemmCurve.clear();
    r.cluster.attentionEfficiency = 0;
    CHECK(Evaluate(r, one).time.forwardSec > plain.time.forwardSec);
}

TEST_CASE("calibration: a trace whose GEMMs ran at a known efficiency by size gives it back", "[core][calibration]")
{
    const Trace t = GemmTrace({{1e9, 0.30, 10}, {1e11, 0.60, 10}, {2e12, 0.75, 5}, {5e12, 0.80, 2}}, "NVIDIA H100 80GB HBM3");
    const Calibration c = CalibrateFromTrace(t, "synthetic", *FindGpu("a100-sxm"));
    CHECK(c.gpu == "h100-sxm");
    CHECK(c.gpuFrom == "device name");
    CHECK(c.gemmKernelsWithFlops == 27);
    REQUIRE(c.points.size() == 3); // decades 1e9, 1e11 and 1e12 (5 + 2 kernels of at least 3)
    CHECK(c.points[0].efficiency == Approx(0.30).epsilon(1e-3));
    CHECK(c.points[1].efficiency == Approx(0.60).epsilon(1e-3));
    CHECK(c.points[0].flops == Approx(1e9));
    CHECK(c.points[2].kernels == 7);
    const double all = (10 * 1e9 + 10 * 1e11 + 5 * 2e12 + 2 * 5e12) /
                       (10 * 1e9 / 0.3 + 10 * 1e11 / 0.6 + 5 * 2e12 / 0.75 + 2 * 5e12 / 0.8);
    CHECK(c.efficiency == Approx(all).epsilon(1e-3)); // kernels timed to the nanosecond
    CHECK(c.gemmShare == Approx(1.0));
    // Between points: linear in log10(FLOPs); beyond them, the end points.
    const auto curve = c.Curve();
    CHECK(EfficiencyAt(curve, 1e10) == Approx(0.45).epsilon(1e-3));
    CHECK(EfficiencyAt(curve, 1e6) == Approx(0.30).epsilon(1e-3));
    CHECK(EfficiencyAt(curve, 1e15) == Approx(curve.back().second));
    // Nothing to calibrate from: one line naming the file and what to do.
    TraceBuilder b;
    b.AddTrack(b.AddDevice("GPU 0", DeviceKind::Gpu, 0), "s");
    CHECK_THROWS_WITH(CalibrateFromTrace(std::move(b).Finish(), "x.json", *FindGpu("h100-sxm")),
                      Catch::Contains("x.json") && Catch::Contains("record_shapes"));
}

TEST_CASE("calibration: the planner times its GEMMs at their size's efficiency", "[core][calibration][planner]")
{
    PlanRequest r = Llama8b(8);
    r.cluster.efficiency = 0.55;
    TrainingConfig c;
    c.dp = 8;
    const PlanRow flat = Evaluate(r, c);
    // The same efficiency at every size: the step without the GEMMs' fixed time (the calibrated
    // curve measured it), 4 linear GEMMs a layer and the output layer's.
    r.cluster.gemmCurve = {{1e6, 0.55}, {1e15, 0.55}};
    const double fixedSec = (4 * r.model.layers + 1) * r.cluster.GemmHalfFlops("bf16") / r.cluster.GemmFlops();
    CHECK(flat.time.forwardSec - Evaluate(r, c).time.forwardSec == Approx(fixedSec).epsilon(1e-9));
    r.cluster.gemmCurve = {{1e6, 0.275}, {1e15, 0.275}}; // half: the linear GEMMs and the output layer take twice as long
    const PlanRow slow = Evaluate(r, c);
    CHECK(slow.time.forwardSec > flat.time.forwardSec * 1.5);
    // Bigger GEMMs more efficient: a larger micro-batch gains.
    r.cluster.gemmCurve = {{1e9, 0.2}, {1e13, 0.8}};
    TrainingConfig big = c;
    big.microBatch = 4;
    const double perSequenceSmall = Evaluate(r, c).time.forwardSec, perSequenceBig = Evaluate(r, big).time.forwardSec / 4;
    CHECK(perSequenceBig < perSequenceSmall);
}

TEST_CASE("calibration from real PyTorch profiles: the efficiencies those A100s reached", "[core][calibration][reference]")
{
    const std::string r0 = RefFile("kineto/sampled_rank-0.json.gz"), r1 = RefFile("kineto/sampled_rank-1.json.gz");
    if (r0.empty() || r1.empty()) {
        WARN("skipped: ../shared/reference-data is absent");
        return;
    }
    const Calibration c = CalibrateFromTrace(ReadTraceFiles({r0, r1}), "sampled", *FindGpu("h100-sxm"));
    CHECK(c.gpu == "a100-sxm"); // cutlass_80 / sm80 kernels
    CHECK(c.gemmKernels == 854);
    CHECK(c.gemmKernelsWithFlops == 772);
    REQUIRE(c.dtypes.size() == 2);
    CHECK(c.dtypes[0] == "tf32");
    // 24.4 TFLOPS of TF32's 156: small GEMMs of a small model, far from peak, and larger ones nearer it.
    CHECK(c.efficiency > 0.15);
    CHECK(c.efficiency < 0.30);
    REQUIRE(c.points.size() >= 4);
    CHECK(c.points.back().efficiency > 5 * c.points[c.points.size() - 4].efficiency);
    CHECK(c.collectiveShare > 0.3);
    // Their memory-bound kernels (elementwise, copies, norms, reductions with shapes): far below
    // A100's 2039 GB/s for kilobyte kernels, nearer it for the largest.
    CHECK(c.memoryKernelsWithBytes > 600);
    CHECK(c.hbmEfficiency > 0.3);
    CHECK(c.hbmEfficiency < 0.8);
    REQUIRE(c.hbmPoints.size() >= 4);
    CHECK(c.hbmPoints.front().efficiency < 0.01);
    CHECK(c.hbmPoints.back().efficiency > 0.4);
    const std::string alexnet = RefFile("kineto/alexnet_1gpu.json.gz"); // recorded without shapes
    if (!alexnet.empty()) CHECK_THROWS_WITH(CalibrateFromTrace(ReadTraceFile(alexnet), "alexnet", *FindGpu("h100-sxm")),
                                            Catch::Contains("record_shapes"));
}

TEST_CASE("Kineto and calibration: attention kernels take the full square's FLOPs from their op, and give attention's efficiency", "[io][kineto][calibration]")
{
    // One forward (Q [2, 32, 4096, 128], K the same) and its backward (its output gradient first),
    // each kernel at 40% of the H100's bf16 peak by the full square.
    const double fwd = 4.0 * 2 * 32 * 4096 * 4096.0 * 128, usFwd = fwd / (989e12 * 0.4) * 1e6;
    char text[2048];
    std::snprintf(text, sizeof text, R"J({"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3"}],"traceEvents":[
      {"ph":"X","cat":"cpu_op","name":"aten::_scaled_dot_product_flash_attention","pid":9,"tid":9,"ts":100,"dur":40,
       "args":{"Input Dims":[[2,32,4096,128],[2,32,4096,128],[2,32,4096,128],[],[]],"Input type":["c10::BFloat16","c10::BFloat16","c10::BFloat16","",""]}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":110,"dur":5,"args":{"correlation":5}},
      {"ph":"X","cat":"kernel","name":"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>(Flash_fwd_params)","pid":0,"tid":7,
       "ts":200,"dur":%.3f,"args":{"correlation":5}},
      {"ph":"X","cat":"cpu_op","name":"aten::_scaled_dot_product_flash_attention_backward","pid":9,"tid":9,"ts":300000,"dur":40,
       "args":{"Input Dims":[[2,32,4096,128],[2,32,4096,128],[2,32,4096,128],[2,32,4096,128]],"Input type":["c10::BFloat16","c10::BFloat16","c10::BFloat16","c10::BFloat16"]}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":300010,"dur":5,"args":{"correlation":6}},
      {"ph":"X","cat":"kernel","name":"void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits>(Flash_bwd_params)","pid":0,"tid":7,
       "ts":400000,"dur":%.3f,"args":{"correlation":6}}
    ]})J", usFwd, 2 * usFwd);
    const Trace t = ReadTraceText(text, "attention.json");
    const Span* forward = SpanAt(t, 200000);
    REQUIRE(forward);
    CHECK(forward->flops == fwd);
    CHECK(t.Str(forward->detail) == "attention 2x32x4096x4096x128 bf16");
    CHECK(SpanAt(t, 400000000)->flops == 2 * fwd); // the backward: twice the forward
    CHECK_THROWS_WITH(CalibrateFromTrace(t, "attention.json", *FindGpu("h100-sxm")), Catch::Contains("no GEMM kernel")); // attention alone
    // With GEMMs beside them: attention's efficiency from its own kernels.
    Trace gemms = GemmTrace({{1e12, 0.7, 4}}, "NVIDIA H100 80GB HBM3");
    TraceBuilder b;
    const uint32_t device = b.AddDevice("GPU 0 (NVIDIA H100 80GB HBM3)", DeviceKind::Gpu, 0);
    const uint32_t track = b.AddTrack(device, "stream 7");
    for (const Track& tr : gemms.Tracks())
        for (Span s : tr.spans) {
            s.name = b.Intern(gemms.Str(s.name));
            s.detail = b.Intern(gemms.Str(s.detail));
            b.AddSpan(track, s);
        }
    for (const Span* a : {forward, SpanAt(t, 400000000)}) {
        Span s = *a;
        s.startNs += 1'000'000'000, s.endNs += 1'000'000'000;
        s.name = b.Intern(t.Str(a->name));
        s.detail = b.Intern(t.Str(a->detail));
        b.AddSpan(track, s);
    }
    const Calibration c = CalibrateFromTrace(std::move(b).Finish(), "both", *FindGpu("a100-sxm"));
    CHECK(c.attentionKernelsWithFlops == 2);
    CHECK(c.attentionEfficiency == Approx(0.4).epsilon(1e-3));
    CHECK(c.efficiency == Approx(0.7).epsilon(1e-3)); // the GEMMs' own

    // The planner runs attention's products at it.
    PlanRequest r;
    r.model = *FindModelPreset("llama3-8b");
    r.cluster.gpu = *FindGpu("h100-sxm");
    r.cluster.gpus = 8;
    r.globalBatch = 8;
    r.seq = 32768;
    TrainingConfig cfg;
    cfg.dp = 8;
    const double flat = Evaluate(r, cfg).time.forwardSec;
    r.cluster.attentionEfficiency = 0.55 / 2; // half the rate: attention's share of the forward doubles
    const double attention = 4.0 * 32768.0 * 32768 * r.model.QueryWidth() * r.model.layers / (989e12 * 0.55);
    CHECK(Evaluate(r, cfg).time.forwardSec - flat == Approx(attention).epsilon(1e-6));
}

TEST_CASE("calibration: the profile's collectives price the links they ran on, where enough sizes were measured", "[core][calibration]")
{
    TraceBuilder b;
    const uint32_t device = b.AddDevice("GPU 0 (NVIDIA H100 80GB HBM3)", DeviceKind::Gpu, 0);
    const uint32_t compute = b.AddTrack(device, "stream 7"), comm = b.AddTrack(device, "stream 9");
    const double peak = 989e12;
    int64_t t = 0;
    for (int i = 0; i < 4; ++i) { // GEMMs at 60%
        Span s;
        s.startNs = t, s.endNs = t + static_cast<int64_t>(1e12 / (peak * 0.6) * 1e9), s.flops = 1e12;
        s.category = SpanCategory::Compute;
        s.name = b.Intern("sm90_xmma_gemm_bf16");
        s.detail = b.Intern("gemm 8192x8192x8192 bf16");
        b.AddSpan(compute, s);
        t = s.endNs + 1000;
    }
    // Allreduces on 8 ranks (a node's NVLink: 400 GB/s bus bandwidth) at five sizes, on 16 ranks
    // (across nodes: 40 GB/s) at five, and an allgather on 16 at one size only.
    auto add = [&](const char* collective, int ranks, uint64_t bytes, double seconds) {
        CollectiveTag tag;
        tag.collective = collective;
        tag.ranks = ranks;
        tag.dtype = "bfloat16";
        Span s;
        s.startNs = t, s.endNs = t + static_cast<int64_t>(seconds * 1e9), s.bytes = bytes;
        s.category = SpanCategory::Collective;
        s.name = b.Intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
        s.detail = b.Intern(FormatCollectiveTag(tag));
        b.AddSpan(comm, s);
        t = s.endNs + 1000;
    };
    for (uint64_t n = 1 << 20; n <= (uint64_t{1} << 28); n <<= 2) {
        add("allreduce", 8, n, 20e-6 + 2.0 * 7 / 8 * static_cast<double>(n) / 400e9);
        add("allreduce", 16, n, 60e-6 + 2.0 * 15 / 16 * static_cast<double>(n) / 40e9);
    }
    add("allgather", 16, 1 << 30, 0.05);
    const Calibration c = CalibrateFromTrace(std::move(b).Finish(), "step", *FindGpu("h100-sxm"), 8);
    REQUIRE(c.nvlinkFit);
    REQUIRE(c.networkFit);
    REQUIRE(c.nvlinkFit->fits.size() == 1);
    CHECK(c.nvlinkFit->fits[0].ranks == 8);
    CHECK(c.nvlinkFit->fits[0].busBwGBps == Approx(400).epsilon(0.01));
    REQUIRE(c.networkFit->fits.size() == 1); // the one-size allgather is left out, and said
    CHECK(c.networkFit->fits[0].busBwGBps == Approx(40).epsilon(0.01));
    CHECK(std::count_if(c.collectiveFits.begin(), c.collectiveFits.end(),
                        [](const std::string& s) { return s.find("too few") != std::string::npos; }) == 1);
    // The planner then prices DP's gradient sync across nodes by the network's fit.
    PlanRequest r = Llama8b(16);
    TrainingConfig cfg;
    cfg.dp = 2, cfg.tp = 8;
    const double assumed = Evaluate(r, cfg).time.dpSyncSec; // 50 GB/s per GPU by default
    r.cluster.networkFit = c.networkFit;
    CHECK(Evaluate(r, cfg).time.dpSyncSec > assumed); // 40 GB/s measured
    // Applied, the profile's fits become the plan's links and say so; a fit given by option wins.
    PlanCluster applied = Llama8b(16).cluster;
    ApplyCalibration(c, applied);
    CHECK(applied.networkFit == c.networkFit);
    CHECK(applied.networkFromProfile);
    CHECK(applied.nvlinkFromProfile);
    PlanCluster given = Llama8b(16).cluster;
    given.networkFit = std::make_shared<const FitFile>();
    ApplyCalibration(c, given);
    CHECK(given.networkFit != c.networkFit);
    CHECK_FALSE(given.networkFromProfile);
    CHECK(given.nvlinkFromProfile);
}

TEST_CASE("calibration: a plan for another GPU than the profile's says so", "[core][calibration]")
{
    const Trace t = GemmTrace({{1e9, 0.30, 10}, {1e11, 0.60, 10}}, "NVIDIA H100 80GB HBM3");
    const Calibration c = CalibrateFromTrace(t, "synthetic", *FindGpu("a100-sxm")); // the trace names its GPU: --gpu is not used
    REQUIRE(c.gpu == "h100-sxm");
    PlanCluster same = Llama8b(8).cluster; // an H100 plan
    CHECK(CalibratedOnOtherGpu(same).empty()); // not calibrated
    ApplyCalibration(c, same);
    CHECK(same.calibratedOn == "h100-sxm");
    CHECK(CalibratedOnOtherGpu(same).empty());
    PlanCluster other = same;
    other.gpu = *FindGpu("a100-sxm");
    const std::string note = CalibratedOnOtherGpu(other);
    CHECK_THAT(note, Catch::Contains("ran on h100-sxm") && Catch::Contains("the plan is for a100-sxm") && Catch::Contains("taken as a100-sxm's"));
    CHECK_THAT(note, !Catch::Contains("links")); // this profile measured no collectives
}
