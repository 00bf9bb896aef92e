package sandbox

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// step is one change of the tour: API calls, then a wait for the repository to show them.
type tourStep struct {
	title   string
	user    string // Alice or Bob
	actions []action
	waitFor string
	check   func(tree) bool
}

// action is one API call, with the kubectl command that does the same.
type action struct {
	kubectl string
	call    func(ctx context.Context, c client.Client) error
}

// The two users who make the tour's changes; their names reach the commits through the
// audit events (docs/attribution.md).
const (
	Alice = "alice"
	Bob   = "bob"
)

func (t *Tour) steps() []tourStep {
	appConfig := DocumentPath("", "configmaps", "app-config")
	flags := DocumentPath("", "configmaps", "feature-flags")
	web := DocumentPath("apps", "deployments", "web")
	return []tourStep{
		{
			title: "Create two ConfigMaps",
			user:  Alice,
			actions: []action{
				createConfigMap("app-config", map[string]string{"LOG_LEVEL": "info", "GREETING": "hello"}, "GREETING", "LOG_LEVEL"),
				createConfigMap("feature-flags", map[string]string{"new-checkout": "false"}, "new-checkout"),
			},
			waitFor: fmt.Sprintf("%s and %s on %s", appConfig, flags, Branch),
			check: func(tr tree) bool {
				v, ok := tr.configMapValue("app-config", "LOG_LEVEL")
				return ok && v == "info" && tr.has(flags)
			},
		},
		{
			title:   "Edit one of them",
			user:    Alice,
			actions: []action{patchConfigMap("app-config", "LOG_LEVEL", "debug")},
			waitFor: fmt.Sprintf("LOG_LEVEL: debug in %s", appConfig),
			check: func(tr tree) bool {
				v, _ := tr.configMapValue("app-config", "LOG_LEVEL")
				return v == "debug"
			},
		},
		{
			title:   "Delete the other",
			user:    Bob,
			actions: []action{deleteConfigMap("feature-flags")},
			waitFor: fmt.Sprintf("%s to be deleted", flags),
			check:   func(tr tree) bool { return !tr.has(flags) },
		},
		{
			title:   "Create a Deployment (no kubelet runs here, so no Pod starts; the object is what counts)",
			user:    Bob,
			actions: []action{createDeployment("web", "nginx:1.27")},
			waitFor: fmt.Sprintf("%s on %s", web, Branch),
			check:   func(tr tree) bool { return tr.deploymentImage("web") == "nginx:1.27" },
		},
		{
			title:   "Roll it to a new image",
			user:    Alice,
			actions: []action{setImage("web", "nginx", "nginx:1.28")},
			waitFor: fmt.Sprintf("image nginx:1.28 in %s", web),
			check:   func(tr tree) bool { return tr.deploymentImage("web") == "nginx:1.28" },
		},
	}
}

func createConfigMap(name string, data map[string]string, keys ...string) action {
	cmd := fmt.Sprintf("kubectl create configmap %s -n %s", name, Namespace)
	for _, k := range keys { // in a fixed order, as a person would type them
		cmd += fmt.Sprintf(" --from-literal=%s=%s", k, data[k])
	}
	return action{kubectl: cmd, call: func(ctx context.Context, c client.Client) error {
		return c.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace},
			Data:       data,
		})
	}}
}

func patchConfigMap(name, key, value string) action {
	cmd := fmt.Sprintf(`kubectl patch configmap %s -n %s --type merge -p '{"data":{"%s":"%s"}}'`, name, Namespace, key, value)
	return action{kubectl: cmd, call: func(ctx context.Context, c client.Client) error {
		var cm corev1.ConfigMap
		if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: name}, &cm); err != nil {
			return err
		}
		patch := client.MergeFrom(cm.DeepCopy())
		cm.Data[key] = value
		return c.Patch(ctx, &cm, patch)
	}}
}

func deleteConfigMap(name string) action {
	return action{kubectl: fmt.Sprintf("kubectl delete configmap %s -n %s", name, Namespace),
		call: func(ctx context.Context, c client.Client) error {
			return c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace}})
		}}
}

func createDeployment(name, image string) action {
	cmd := fmt.Sprintf("kubectl create deployment %s -n %s --image=%s --replicas=1", name, Namespace, image)
	return action{kubectl: cmd, call: func(ctx context.Context, c client.Client) error {
		labels := map[string]string{"app": name}
		one := int32(1)
		return c.Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, Labels: labels},
			Spec: appsv1.DeploymentSpec{
				Replicas: &one,
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{
						Name:  "nginx", // kubectl names the container after the image
						Image: image,
					}}},
				},
			},
		})
	}}
}

func setImage(name, container, image string) action {
	cmd := fmt.Sprintf("kubectl set image deployment/%s -n %s %s=%s", name, Namespace, container, image)
	return action{kubectl: cmd, call: func(ctx context.Context, c client.Client) error {
		var d appsv1.Deployment
		if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: name}, &d); err != nil {
			return err
		}
		patch := client.MergeFrom(d.DeepCopy())
		for i := range d.Spec.Template.Spec.Containers {
			if d.Spec.Template.Spec.Containers[i].Name == container {
				d.Spec.Template.Spec.Containers[i].Image = image
			}
		}
		return c.Patch(ctx, &d, patch)
	}}
}
