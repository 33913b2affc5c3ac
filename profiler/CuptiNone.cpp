// Built in place of the CUPTI capture when CUPTI was not found at configure time.
#include "Capture.hpp"

namespace paralens::prof {

std::unique_ptr<Capture> MakeCuptiCapture(const CaptureOptions&, std::string* whyNot)
{
    if (whyNot)
        *whyNot = "this paralens was built without CUPTI (cupti.h and libcupti were not found when it was configured; "
                  "see README, GPU backend)";
    return nullptr;
}

void PrepareNvtxForCupti() {}
bool CuptiBuilt() { return false; }
uint32_t CuptiCompiledVersion() { return 0; }

} // namespace paralens::prof
