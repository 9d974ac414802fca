// convgrid: the command-line tool. Each subcommand lives in its own apps/cmd_*.cpp.
//
// Errors: an error that every rank meets (bad flags, bad shape, impossible grid, a file that is
// not what it claims) is printed once, by rank 0, and every rank exits with status 1. The ranks
// find out whether they all failed through a barrier on a communicator of its own, waited for
// at most a few seconds; an error that only some ranks meet is printed by each of them and the
// whole job is aborted with status 1 (convgrid::abort_job), so that no rank is left waiting in a
// collective. A job stopped by a signal (convgrid::JobStopped) is not an error: every rank prints
// its line and exits with the stop's status.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "comm/mpi_error.hpp"
#include "commands.hpp"
#include "convgrid/error.hpp"

namespace {

// True when every rank of the job reached this call within `seconds`.
bool all_ranks_failed(MPI_Comm error_comm, double seconds) {
  MPI_Request req;
  MPI_Ibarrier(error_comm, &req);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int done = 0;
  while (!done && std::chrono::steady_clock::now() < deadline) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return done != 0;
}

int fail(MPI_Comm error_comm, int rank, int size, const std::string& message) {
  if (size == 1 || all_ranks_failed(error_comm, 5.0)) {
    if (rank == 0) std::fprintf(stderr, "convgrid: error: %s\n", message.c_str());
    MPI_Finalize();
    return 1;
  }
  convgrid::abort_job("error on rank " + std::to_string(rank) + ": " + message);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm error_comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &error_comm);

  CLI::App app{"convgrid: communication-efficient distributed CNN layers on MPI"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "convgrid 0.1.0");
  convgrid::cli::Registry registry;
  convgrid::cli::add_conv_command(app, registry);
  convgrid::cli::add_bench_command(app, registry);
  convgrid::cli::add_calibrate_command(app, registry);
  convgrid::cli::add_plan_command(app, registry);
  convgrid::cli::add_simulate_command(app, registry);
  convgrid::cli::add_train_command(app, registry);
  convgrid::cli::add_step_command(app, registry);
  convgrid::cli::add_export_command(app, registry);

  int status = 0;
  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      if (rank == 0) app.exit(e);
      MPI_Finalize();
      return 0;
    } catch (const CLI::CallForAllHelp& e) {
      if (rank == 0) app.exit(e);
      MPI_Finalize();
      return 0;
    } catch (const CLI::CallForVersion& e) {
      if (rank == 0) app.exit(e);
      MPI_Finalize();
      return 0;
    } catch (const CLI::ParseError& e) {
      // Bad flags are the same on every rank: one line, exit status 1.
      if (rank == 0) std::fprintf(stderr, "convgrid: error: %s (see --help)\n", e.what());
      MPI_Finalize();
      return 1;
    }
    for (auto& [sub, run] : registry) {
      if (sub->parsed()) status = run();
    }
  } catch (const convgrid::JobStopped& e) {
    // Every rank stopped at the same point: each says so and MPI ends normally.
    std::fprintf(stderr, "convgrid: %s\n", e.what());
    std::fflush(stderr);
    MPI_Finalize();
    return e.status();
  } catch (const std::exception& e) {
    return fail(error_comm, rank, size, e.what());
  }
  MPI_Finalize();
  return status;
}
