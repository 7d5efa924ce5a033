#include <xmsg/bootstrap/bootstrap.hpp>

#include <cstdlib>

namespace xmsg::bootstrap {

bool pmix_server_present() {
  // A PMIx client needs its namespace and rank and one of the server URIs a server exports.
  // Checked before PMIx_Init because OpenPMIx offers no automatic singleton mode.
  if (!std::getenv("PMIX_NAMESPACE") || !std::getenv("PMIX_RANK")) return false;
  for (const char* uri : {"PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3",
                          "PMIX_SERVER_URI21", "PMIX_SERVER_URI2"}) {
    if (std::getenv(uri)) return true;
  }
  return false;
}

std::unique_ptr<Bootstrap> make_bootstrap() {
  return pmix_server_present() ? make_pmix_bootstrap() : make_singleton_bootstrap();
}

}  // namespace xmsg::bootstrap
