#include "mpi/NcclBootstrap.hpp"

#include "mpi/MpiSync.hpp"

#include <algorithm>
#include <cstring>

namespace paralens::app::mpi {

namespace {
constexpr size_t kProblemBytes = 4096; // the longest explanation broadcast (longer ones are cut)
}

std::string DescribeProblems(const std::vector<std::string>& problems)
{
    std::vector<std::pair<std::string, std::string>> groups; // problem -> "0, 3, 5"
    for (size_t r = 0; r < problems.size(); ++r) {
        if (problems[r].empty()) continue;
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == problems[r]; });
        if (it == groups.end()) groups.emplace_back(problems[r], std::to_string(r));
        else it->second += ", " + std::to_string(r);
    }
    std::string out;
    for (const auto& [problem, ranks] : groups)
        out += (out.empty() ? "" : "; ") + std::string(ranks.find(',') == std::string::npos ? "rank " : "ranks ") + ranks + " " + problem;
    return out;
}

LocalPlace FindLocalPlace(const Context& ctx)
{
    MPI_Comm local;
    PARALENS_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, ctx.Rank(), MPI_INFO_NULL, &local));
    LocalPlace place;
    PARALENS_MPI_CHECK(MPI_Comm_rank(local, &place.rank));
    PARALENS_MPI_CHECK(MPI_Comm_size(local, &place.size));
    PARALENS_MPI_CHECK(MPI_Comm_free(&local));
    return place;
}

GpuAssignment AssignGpu(LocalPlace place, const std::vector<int>& usable, const std::string& whyNone)
{
    GpuAssignment a;
    if (usable.empty()) {
        a.problem = whyNone.empty() ? std::string("no CUDA device") : whyNone;
        return a;
    }
    if (place.rank >= static_cast<int>(usable.size())) {
        a.problem = "process " + std::to_string(place.rank + 1) + " of " + std::to_string(place.size) + " on this host, but only " +
                    std::to_string(usable.size()) + " GPU(s) to drive here (one process per GPU: start at most " +
                    std::to_string(usable.size()) + " per host, e.g. mpirun --map-by ppr:" + std::to_string(usable.size()) +
                    ":node, or name more with --gpus)";
        return a;
    }
    a.gpu = usable[static_cast<size_t>(place.rank)];
    return a;
}

Bootstrap ShareNcclId(const Context& ctx, const std::string& localProblem, const std::function<NcclId()>& makeId, double timeout)
{
    // [0]: 1 when every rank can go; then the id; then the explanation (NUL-terminated).
    std::vector<uint8_t> packet(1 + kNcclIdBytes + kProblemBytes, 0);
    const std::string mine = localProblem.empty() ? std::string() : "(" + ctx.Host() + "): " + localProblem;
    const std::vector<std::string> problems = GatherText(ctx, mine, timeout, "asking every rank for its GPU");
    if (ctx.Rank() == 0) {
        std::string why = DescribeProblems(problems);
        if (why.empty()) {
            try {
                const NcclId id = makeId();
                std::copy(id.begin(), id.end(), packet.begin() + 1);
                packet[0] = 1;
            } catch (const std::exception& e) {
                why = std::string("rank 0: ") + e.what();
            }
        }
        std::memcpy(packet.data() + 1 + kNcclIdBytes, why.data(), std::min(why.size(), kProblemBytes - 1));
    }
    BroadcastBytes(ctx, packet, timeout, "handing out the NCCL unique id");
    Bootstrap b;
    b.ok = packet[0] == 1;
    std::copy_n(packet.begin() + 1, kNcclIdBytes, b.ncclId.begin());
    if (!b.ok) b.problem = reinterpret_cast<const char*>(packet.data() + 1 + kNcclIdBytes);
    return b;
}

} // namespace paralens::app::mpi
