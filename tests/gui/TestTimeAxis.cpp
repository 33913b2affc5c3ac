// The timeline's window and ruler (app/gui/TimeAxis.hpp), without a window.
#include "TimeAxis.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace paralens::app;

TEST_CASE("nice steps are 1, 2 or 5 times a power of ten", "[gui]")
{
    CHECK(NiceStepNs(0.7) == 1.0);
    CHECK(NiceStepNs(1.0) == 1.0);
    CHECK(NiceStepNs(1.3) == 2.0);
    CHECK(NiceStepNs(3.0) == 5.0);
    CHECK(NiceStepNs(7.0) == 10.0);
    CHECK(NiceStepNs(120.0) == 200.0);
    CHECK(NiceStepNs(4.2e6) == 5e6);
}

TEST_CASE("ticks are spaced at least the asked pixels apart, majors on multiples of the step", "[gui]")
{
    std::vector<Tick> ticks;
    TimeWindow w{0.0, 33e6}; // 33 ms over 1000 px, majors >= 100 px apart
    const double step = ComputeTicks(w, 1000.0, 100.0, ticks);
    CHECK(step == 5e6);
    int majors = 0;
    for (const Tick& t : ticks) {
        if (!t.major) continue;
        ++majors;
        CHECK(std::fmod(t.ns, step) == Approx(0.0).margin(1e-3));
    }
    CHECK(majors == 7); // 0, 5, ..., 30 ms
    CHECK(ticks.size() > 7u * 4u);
    char buf[32];
    CHECK(std::string(FormatTime(buf, sizeof buf, 15e6, step)) == "15 ms");
    CHECK(std::string(FormatTime(buf, sizeof buf, 2.5e6, 5e5)) == "2.5 ms");
    CHECK(std::string(FormatTime(buf, sizeof buf, 250, 50)) == "250 ns");
    CHECK(std::string(FormatDuration(buf, sizeof buf, 1234567)) == "1.235 ms");
}

TEST_CASE("zooming keeps the point under the cursor in place and respects the limits", "[gui]")
{
    TimeWindow w{0.0, 1000.0};
    w.ZoomAround(250.0, 0.5, 1.0, 1e6);
    CHECK(w.beginNs == Approx(125.0));
    CHECK(w.endNs == Approx(625.0));
    w.ZoomAround(300.0, 1e-9, 10.0, 1e6);
    CHECK(w.Span() == Approx(10.0));
    w.Fit(100.0, 200.0, 0.05, 1.0);
    CHECK(w.beginNs == Approx(95.0));
    CHECK(w.endNs == Approx(205.0));
    w.Pan(-1e9);
    w.Clamp(1000.0);
    CHECK(w.endNs > 0.0);
}
