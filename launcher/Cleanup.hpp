// Removal of everything a job leaves on disk. Safe to call several times and from several
// processes at once (each node server and the coordinator clean up on every kind of ending).
#pragma once

#include <string>

namespace xmsg::launcher {

// rm -rf `path` (does not follow symlinks). Missing path is fine.
void remove_tree(const std::string& path);
// Unlinks /dev/shm/xmsg-<job_id>* left by ranks that died before cleaning up.
void remove_job_shm(const std::string& job_id);

}  // namespace xmsg::launcher
