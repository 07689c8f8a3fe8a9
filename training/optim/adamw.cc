#include "training/optim/adamw.h"

#include <torch/version.h>

#include <algorithm>
#include <cmath>

namespace shardscope::train {

double learning_rate(const AdamWConfig& c, int step) {
  if (step < c.warmup_steps) return c.lr * double(step + 1) / double(c.warmup_steps);
  double span = std::max(1, c.total_steps - c.warmup_steps);
  double progress = std::min(1.0, double(step - c.warmup_steps) / span);
  double min_lr = c.lr * c.min_lr_ratio;
  return min_lr + 0.5 * (c.lr - min_lr) * (1.0 + std::cos(M_PI * progress));
}

void adamw_update(Unit& u, double lr, int t, const AdamWConfig& c) {
  torch::NoGradGuard no_grad;
  torch::Tensor p = u.master(), g = u.grad_for_optimizer(), m = u.exp_avg(), v = u.exp_avg_sq();
  m.mul_(c.beta1).add_(g, 1.0 - c.beta1);
  v.mul_(c.beta2).addcmul_(g, g, 1.0 - c.beta2);
  const double bc1 = 1.0 - std::pow(c.beta1, t), bc2 = 1.0 - std::pow(c.beta2, t);
  p.mul_(1.0 - lr * c.weight_decay);
  p.addcdiv_(m, (v / bc2).sqrt_().add_(c.eps), -lr / bc1);
}

void adamw_update_all(const std::vector<std::unique_ptr<Unit>>& units, double lr, int t, const AdamWConfig& c) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  std::vector<torch::Tensor> p, g, m, v;
  for (const auto& u : units) {
    p.push_back(u->master()), g.push_back(u->grad_for_optimizer());
    m.push_back(u->exp_avg()), v.push_back(u->exp_avg_sq());
  }
  auto fusable = [&](const torch::Tensor& x) { return x.is_cuda() && x.scalar_type() == torch::kFloat32; };
  if (!p.empty() && std::all_of(p.begin(), p.end(), fusable) && std::all_of(g.begin(), g.end(), fusable)) {
    torch::NoGradGuard no_grad;
    // The kernel reads each shard's update count from a tensor; every unit has had the same `t`.
    const torch::Tensor step = torch::full({}, double(t), p[0].options());
    const std::vector<torch::Tensor> steps(p.size(), step);
    at::_fused_adamw_(p, g, m, v, {}, steps, lr, c.beta1, c.beta2, c.weight_decay, c.eps, /*amsgrad=*/false,
                      /*maximize=*/false);
    return;
  }
#endif
  for (const auto& u : units) adamw_update(*u, lr, t, c);
}

}  // namespace shardscope::train
