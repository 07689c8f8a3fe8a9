#include "training/optim/adamw.h"

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

}  // namespace shardscope::train
